/** A subscription ready to send, as the route caches it. */
export interface ServedSubscription {
  body: string;
  headers: Record<string, string>;
}
