/** A permission as the back office lists it (seed 001 §3 Permission). */
export interface PermissionItem {
  _id: string;
  name: string;
  desc: string;
  /** How many paid orders granted it. */
  useTimes: number;
}
