/**
 * The pure parts of /admin_userlist (UserList.tsx): the edit form's draft and what it sends, the
 * date filters as whole local days, and the 随机 channel code.
 */
import { CHANNEL_CODE_LENGTH } from "../../../src/modules/channel/schema.ts";
import type { AdminUser, UpdateUserInput } from "../../../src/modules/user/admin-schema.ts";
import { numberFrom } from "../../components/admin/numbers.tsx";

const trimG = (g: number) => String(Number(g.toFixed(3)));

const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** 随机: a channel code of 6 letters and digits (the server checks it is free). */
export function randomChannelCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(CHANNEL_CODE_LENGTH));
  return Array.from(bytes, (byte) => CODE_ALPHABET[byte % CODE_ALPHABET.length]).join("");
}

/** A YYYY-MM-DD of the date inputs as the first (or, `end`, the last) ms of that day here. */
export function dayBound(day: string, end: boolean): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return null;
  const [year, month, date] = [Number(match[1]), Number(match[2]) - 1, Number(match[3])];
  return end ? new Date(year, month, date + 1).getTime() - 1 : new Date(year, month, date).getTime();
}

/** The edit form's state: numbers stay text while typed; blank adjustment fields mean 0. */
export interface UserDraft {
  /** The user being edited. */
  _id: string;
  disable: boolean;
  scale: string;
  canChangeDescribeKey: boolean;
  canChangePassword: boolean;
  normalPermission: boolean;
  specialDailyUnlimitTraffic: boolean;
  dailyUnlimitTraffic: string;
  forceReward: boolean;
  trafficG: string;
  days: string;
  walletYuan: string;
  reason: string;
}

export const userToDraft = (user: AdminUser): UserDraft => ({
  _id: user._id,
  disable: user.disable,
  scale: String(user.scale),
  canChangeDescribeKey: user.canChangeDescribeKey,
  canChangePassword: user.canChangePassword,
  normalPermission: user.normalPermission,
  specialDailyUnlimitTraffic: user.specialDailyUnlimitTraffic,
  dailyUnlimitTraffic: trimG(user.dailyUnlimitTraffic),
  forceReward: user.forceReward,
  trafficG: "",
  days: "",
  walletYuan: "",
  reason: "",
});

/** Blank adjustment fields mean 0. */
const signedFrom = (text: string) => (text.trim() === "" ? 0 : numberFrom(text));

export function draftToUpdate(id: string, draft: UserDraft): UpdateUserInput {
  const adjust = {
    trafficG: signedFrom(draft.trafficG),
    days: signedFrom(draft.days),
    walletYuan: signedFrom(draft.walletYuan),
    reason: draft.reason.trim(),
  };
  const adjusting =
    adjust.trafficG !== 0 || adjust.days !== 0 || adjust.walletYuan !== 0 || adjust.reason !== "";
  return {
    _id: id,
    disable: draft.disable,
    scale: numberFrom(draft.scale),
    canChangeDescribeKey: draft.canChangeDescribeKey,
    canChangePassword: draft.canChangePassword,
    normalPermission: draft.normalPermission,
    specialDailyUnlimitTraffic: draft.specialDailyUnlimitTraffic,
    ...(draft.specialDailyUnlimitTraffic
      ? { dailyUnlimitTraffic: numberFrom(draft.dailyUnlimitTraffic) }
      : {}),
    forceReward: draft.forceReward,
    ...(adjusting ? { adjust } : {}),
  };
}
