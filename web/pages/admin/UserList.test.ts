/**
 * /admin_userlist's form rules without a browser: what the edit form sends (the daily amount only
 * with the special limit on, no adjustment when its fields are blank), the date filters as whole
 * days, and the 随机 channel code the server's schema accepts.
 */
import { expect, test } from "bun:test";
import "../../no-eval.ts";
import { updateChannelInput } from "../../../src/modules/channel/schema.ts";
import { type AdminUser, updateUserInput } from "../../../src/modules/user/admin-schema.ts";
import { dayBound, draftToUpdate, randomChannelCode, userToDraft } from "./userForm.ts";

const USER: AdminUser = {
  _id: "0123456789abcdef01234567",
  email: "a@example.com",
  disable: false,
  scale: 1,
  channel_code: "",
  createTime: 0,
  paidUser: false,
  type: "normal",
  is_agency: false,
  agency: "",
  wallet_money: 0,
  spendTraffic: 0,
  traffic: 0,
  vipExpireTime: 0,
  lastActiveTime: 0,
  first_url: "",
  last_url: "",
  userkey: "k",
  canChangeDescribeKey: true,
  canChangePassword: true,
  normalPermission: false,
  specialDailyUnlimitTraffic: false,
  dailyUnlimitTraffic: 0,
  forceReward: false,
};

test("an unchanged form sends the flags, no daily amount and no adjustment", () => {
  const sent = draftToUpdate(USER._id, userToDraft(USER));
  expect(sent).not.toHaveProperty("dailyUnlimitTraffic");
  expect(sent).not.toHaveProperty("adjust");
  expect(updateUserInput.safeParse(sent).success).toBe(true);
});

test("the daily amount goes with the special limit; an adjustment without a reason is refused", () => {
  const draft = {
    ...userToDraft(USER),
    specialDailyUnlimitTraffic: true,
    dailyUnlimitTraffic: "30",
    trafficG: "10",
  };
  const sent = draftToUpdate(USER._id, draft);
  expect(sent).toMatchObject({
    dailyUnlimitTraffic: 30,
    adjust: { trafficG: 10, days: 0, walletYuan: 0, reason: "" },
  });
  expect(updateUserInput.safeParse(sent).success).toBe(false);
  expect(updateUserInput.safeParse(draftToUpdate(USER._id, { ...draft, reason: "补偿" })).success).toBe(true);
});

test("date filters cover whole local days", () => {
  const from = dayBound("2026-03-01", false) as number;
  const to = dayBound("2026-03-01", true) as number;
  expect(new Date(from).getHours()).toBe(0);
  expect(new Date(to + 1).getDate()).toBe(2);
  expect(dayBound("", false)).toBeNull();
  expect(dayBound("not a day", true)).toBeNull();
});

test("随机 makes 6-character codes the channel schema accepts", () => {
  for (let i = 0; i < 50; i++) {
    const code = randomChannelCode();
    expect(updateChannelInput.safeParse({ email: "a@example.com", code }).success).toBe(true);
  }
});
