/**
 * Channels and rebates (issue 15 §1–§3, §6): admins give a user a channel; customers who sign up
 * through its link are counted; their paid orders credit the channel's wallet exactly once, by
 * every paying path, within comsumerDuration days, at the channel's rate rounded to the fen.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  createOrder,
  dobuy,
  giveWallet,
  makeCombo,
  makeCoupon,
  notifySandbox,
  payWithSandbox,
  sandboxTradeNo,
  startShopServer,
  walletFen,
} from "../../../tests/commerce.ts";
import {
  ApiClient,
  loggedInClient,
  startWithAdmin,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { settleWithoutGateway } from "../../payments/credit.ts";
import type { Trade } from "../order/schema.ts";
import { transformPassword } from "../user/password.ts";
import type { UserRow } from "../user/row.ts";
import type { Role } from "../user/schema.ts";
import { createUser, findUserByEmail } from "../user/service.ts";
import type { Channel, ChannelInfo, InvitedUsers, RewardList } from "./schema.ts";
import { maskEmail, rewardFen } from "./schema.ts";
import { payChannelRebate, updateChannel } from "./service.ts";

let server: TestServer;
let admin: ApiClient;
let comboId: string;

beforeAll(async () => {
  ({ server, admin } = await startWithAdmin(startShopServer));
  // 10.10 yuan: 15% of it is 151.5 fen, which must round up to 152.
  comboId = (await makeCombo(server, { name: "月付", price: 10.1, traffic: 1024 }))._id;
});
afterAll(async () => {
  await server?.close();
});

let codes = 0;
/** A fresh 6-character code. */
const nextCode = () => `T${String(++codes).padStart(5, "0")}`;

/** A user made a channel through the admin call; returns the owner's client and row. */
async function makeChannel(fields: { rewardRate?: number; comsumerDuration?: number; role?: Role } = {}) {
  const owner = await loggedInClient(server, { role: fields.role ?? "normal" });
  const answer = await admin.call<Channel>("/api/admin/users/update_channel", {
    email: owner.email,
    name: "测试渠道",
    code: nextCode(),
    rewardRate: fields.rewardRate ?? 0.15,
    comsumerDuration: fields.comsumerDuration ?? 30,
  });
  if (answer.code !== 0) throw new Error(`update_channel: ${answer.code} ${answer.msg}`);
  return { ...owner, channel: answer.data };
}

/** A customer who signed up through the invite link: GET /?c=CODE, then /api/user/signup. */
async function signUpThrough(code: string): Promise<{ client: ApiClient; user: UserRow; email: string }> {
  const client = new ApiClient(server.url);
  await client.get(`/?c=${code}`);
  const email = uniqueEmail("invited");
  const answer = await client.call("/api/user/signup", {
    email,
    password: transformPassword("correct-horse-1"),
  });
  if (answer.code !== 0) throw new Error(`signup: ${answer.code} ${answer.msg}`);
  return { client, user: (await findUserByEmail(server.context, email)) as UserRow, email };
}

/** A customer carrying the code as sign-up stores it, made straight through the service, logged in. */
async function invitedCustomer(code: string) {
  const email = uniqueEmail("cust");
  const user = await createUser(server.context, {
    email,
    passwordDigest: transformPassword("correct-horse-1"),
    channelCode: code,
  });
  const client = new ApiClient(server.url);
  expect((await client.login(email, "correct-horse-1")).code).toBe(0);
  return { client, user, email };
}

/** An order of the combo, paid through `ferry order mark-paid`'s path at `now`. */
async function orderPaidByHand(client: ApiClient, now: number): Promise<string> {
  const order = await createOrder(client, comboId);
  expect((await settleWithoutGateway(server.context, order._id, "manual", "manual: test", now)).result).toBe(
    "credited",
  );
  return order._id;
}

const rewardsOf = async (userId: string) =>
  await server.context.db.all<{
    order_id: string;
    reward_fen: number;
    user_spend_fen: number;
    left_fen: number;
  }>(
    "SELECT order_id, reward_fen, user_spend_fen, left_fen FROM channel_rewards WHERE channel_user_id = ?",
    userId,
  );

const walletEntries = async (userId: string) =>
  await server.context.db.all<{ type: string; change_fen: number; order_id: string | null }>(
    "SELECT type, change_fen, order_id FROM wallet_entries WHERE user_id = ? ORDER BY id",
    userId,
  );

describe("rebates", () => {
  test("an invited customer's sandbox payment, notified 50 times at once, credits the channel once", async () => {
    const owner = await makeChannel({ rewardRate: 0.15 });
    const customer = await signUpThrough(owner.channel.code);
    expect(customer.user.channel_code).toBe(owner.channel.code);
    const order = await createOrder(customer.client, comboId);
    const pay = await dobuy(customer.client, order._id);
    const tradeNo = sandboxTradeNo(pay.data);
    const answers = await Promise.all(Array.from({ length: 50 }, () => notifySandbox(server, tradeNo, 1010)));
    expect(answers.every((answer) => answer.status === 303)).toBe(true);

    expect(await walletFen(server, owner.user.id)).toBe(152);
    expect(await rewardsOf(owner.user.id)).toEqual([
      { order_id: order._id, reward_fen: 152, user_spend_fen: 1010, left_fen: 152 },
    ]);
    expect(await walletEntries(owner.user.id)).toEqual([
      { type: "reward", change_fen: 152, order_id: order._id },
    ]);

    const rewards = (await owner.client.call<RewardList>("/api/channel/reward_list")).data;
    expect(rewards).toEqual({
      count: 1,
      totalReward: 1.52,
      list: [
        {
          comsumer_name: maskEmail(customer.email),
          desc: "月付",
          userSpend: 10.1,
          reward: 1.52,
          buyTime: expect.any(Number),
          left: 1.52,
        },
      ],
    });
    expect(rewards.list[0]?.comsumer_name).toMatch(/^in\*\*\*@example\.com$/);

    const trades = (await admin.call<Trade[]>("/api/admin/trades/tradelist", { filterStr: customer.email }))
      .data;
    expect(trades.map((trade) => [trade.order_id, trade.rewardMoney, trade.fromChannel])).toEqual([
      [order._id, 1.52, owner.channel.code],
    ]);

    const notices = (await owner.client.call<{ desc: string; href: string }[]>("/api/user_notive/list")).data;
    expect(notices.filter((notice) => notice.desc.startsWith("返利到账"))).toHaveLength(1);
    expect(notices[0]?.desc).toContain("1.52 元");
  });

  test("wallet settlement and ferry order mark-paid credit the channel too", async () => {
    const owner = await makeChannel({ rewardRate: 0.5 });
    const customer = await signUpThrough(owner.channel.code);
    await giveWallet(server, customer.user.id, 1010);
    const order = await createOrder(customer.client, comboId);
    expect((await customer.client.call("/api/shop/wallet_check", { order_id: order._id })).code).toBe(0);
    expect((await dobuy(customer.client, order._id)).data.status).toBe("paied");
    // The wallet money counts as paid: 50% of 10.10 = 5.05.
    expect(await walletFen(server, owner.user.id)).toBe(505);

    await orderPaidByHand(customer.client, Date.now());
    expect(await walletFen(server, owner.user.id)).toBe(1010);
    expect((await rewardsOf(owner.user.id)).map((reward) => reward.left_fen)).toEqual([505, 1010]);
  });

  test("a coupon's discount is not money paid: the rebate is on what the customer paid", async () => {
    const owner = await makeChannel({ rewardRate: 0.1 });
    const customer = await invitedCustomer(owner.channel.code);
    await makeCoupon(server, { name: "五折券", type: "discount", code: "HALF50", discount: 0.5 });
    const order = await createOrder(customer.client, comboId);
    const used = await customer.client.call("/api/coupon/orderUseCoupon", {
      order_id: order._id,
      code: "HALF50",
    });
    expect(used.code).toBe(0);
    await payWithSandbox(server, customer.client, order._id);
    // Paid 5.05 of 10.10: 10% is 50.5 fen, rounded up to 51.
    expect(await rewardsOf(owner.user.id)).toEqual([
      { order_id: order._id, reward_fen: 51, user_spend_fen: 505, left_fen: 51 },
    ]);
  });

  test("no rebate after comsumerDuration days; the last millisecond still earns", async () => {
    const owner = await makeChannel({ comsumerDuration: 30 });
    const customer = await invitedCustomer(owner.channel.code);
    const end = customer.user.create_time + 30 * DAY_MS;
    await orderPaidByHand(customer.client, end + 1);
    expect(await rewardsOf(owner.user.id)).toHaveLength(0);
    await orderPaidByHand(customer.client, end);
    expect(await rewardsOf(owner.user.id)).toHaveLength(1);
    expect(await walletFen(server, owner.user.id)).toBe(152);
  });

  test("none for an uninvited customer, an unknown code, or the owner's own order", async () => {
    const owner = await makeChannel();
    const plain = await loggedInClient(server);
    await orderPaidByHand(plain.client, Date.now());
    const stranger = await signUpThrough("ZZ9ZZ9");
    expect(stranger.user.channel_code).toBe("ZZ9ZZ9");
    await orderPaidByHand(stranger.client, Date.now());

    // Someone who signed up with a code nobody had, and was later given that very code.
    const self = await invitedCustomer("SELF01");
    await updateChannel(server.context, {
      email: self.email,
      code: "self01",
      rewardRate: 0.5,
      comsumerDuration: 30,
    });
    await orderPaidByHand(self.client, Date.now());
    expect(await rewardsOf(self.user.id)).toHaveLength(0);
    expect(await walletFen(server, self.user.id)).toBe(0);

    expect(await rewardsOf(owner.user.id)).toHaveLength(0);
    const total = "SELECT COUNT(*) AS n FROM channel_rewards WHERE consumer_user_id IN (?1, ?2, ?3)";
    expect(
      (await server.context.db.get<{ n: number }>(total, plain.user.id, stranger.user.id, self.user.id))?.n,
    ).toBe(0);
  });

  test("none for a cancelled order, even when its payment arrives afterwards", async () => {
    const owner = await makeChannel();
    const customer = await signUpThrough(owner.channel.code);
    const order = await createOrder(customer.client, comboId);
    const tradeNo = sandboxTradeNo((await dobuy(customer.client, order._id)).data);
    expect((await customer.client.call("/api/order/cancel_order", { order_id: order._id })).code).toBe(0);
    await notifySandbox(server, tradeNo, 1010);
    expect(await rewardsOf(owner.user.id)).toHaveLength(0);
    expect(await walletFen(server, owner.user.id)).toBe(0);
  });

  test("rate 0 earns nothing; rate 0.5 earns half, to the fen", async () => {
    const zero = await makeChannel({ rewardRate: 0 });
    await orderPaidByHand((await invitedCustomer(zero.channel.code)).client, Date.now());
    expect(await rewardsOf(zero.user.id)).toHaveLength(0);
    expect(await walletEntries(zero.user.id)).toHaveLength(0);

    const half = await makeChannel({ rewardRate: 0.5 });
    const customer = await signUpThrough(half.channel.code);
    await payWithSandbox(server, customer.client, (await createOrder(customer.client, comboId))._id);
    expect(await walletFen(server, half.user.id)).toBe(505);
  });

  test("amounts to the fen: basis points, half up, no float noise", () => {
    expect(rewardFen(0.15, 1010)).toBe(152);
    expect(rewardFen(0.1, 5)).toBe(1);
    expect(rewardFen(0.1, 4)).toBe(0);
    expect(rewardFen(0.07, 1050)).toBe(74);
    expect(rewardFen(0.5, 1)).toBe(1);
    expect(rewardFen(0.29, 100)).toBe(29);
    expect(rewardFen(0, 1_000_000)).toBe(0);
  });

  test("openChannel off: no new rebates, and /channel says the programme is closed", async () => {
    const owner = await makeChannel();
    const customer = await invitedCustomer(owner.channel.code);
    await server.context.settings.update({ openChannel: false });
    try {
      await orderPaidByHand(customer.client, Date.now());
      const info = (await owner.client.call<ChannelInfo>("/api/channel/channel_info")).data;
      expect(info.openChannel).toBe(false);
    } finally {
      await server.context.settings.update({ openChannel: true });
    }
    expect(await rewardsOf(owner.user.id)).toHaveLength(0);
  });

  test("a rebate is only paid inside the crediting transaction, and once per order", async () => {
    const db = server.context.db;
    await expect(payChannelRebate(server.context, {} as never, Date.now())).rejects.toThrow();
    // Re-running the rebate of a credited order adds nothing.
    const row = (await db.get<{ id: string }>("SELECT order_id AS id FROM channel_rewards LIMIT 1")) as {
      id: string;
    };
    const order = (await db.get("SELECT * FROM orders WHERE id = ?", row.id)) as never;
    const before = (await db.get<{ n: number }>("SELECT SUM(wallet_fen) AS n FROM users"))?.n;
    expect(await tx(db, async () => await payChannelRebate(server.context, order, Date.now()))).toBe(0);
    expect((await db.get<{ n: number }>("SELECT SUM(wallet_fen) AS n FROM users"))?.n).toBe(before);
  });
});

describe("channels", () => {
  test("update_channel makes a normal user type channel with defaults from the settings; get_user_channel reads it", async () => {
    await server.context.settings.update({ channelRewardRate: 0.2, channelConsumerDuration: 90 });
    const user = await loggedInClient(server);
    const saved = await admin.call<Channel>("/api/admin/users/update_channel", {
      email: user.email,
      code: "",
    });
    expect(saved.code).toBe(0);
    expect(saved.data.code).toMatch(/^[A-Z]{6}$/);
    expect(saved.data).toMatchObject({ email: user.email, rewardRate: 0.2, comsumerDuration: 90, name: "" });
    const info = await user.client.call<{ type: string }>("/api/user/userinfo");
    expect(info.data.type).toBe("channel");
    const read = await admin.call<Channel | null>("/api/admin/users/get_user_channel", {
      user_id: user.user.id,
    });
    expect(read.data).toEqual(saved.data);
    const none = await admin.call("/api/admin/users/get_user_channel", { user_id: "0".repeat(24) });
    expect(none).toMatchObject({ code: 0, data: null });
  });

  test("an admin or yunying given a channel keeps the role", async () => {
    const yunying = await makeChannel({ role: "yunying" });
    expect((await yunying.client.call<{ type: string }>("/api/user/userinfo")).data.type).toBe("yunying");
  });

  test("codes: 6 letters or digits, unique regardless of case, never nocode; clear messages", async () => {
    const taken = await makeChannel();
    const other = await loggedInClient(server);
    const refused = async (code: string) =>
      admin.call("/api/admin/users/update_channel", {
        email: other.email,
        code,
        rewardRate: 0.1,
        comsumerDuration: 1,
      });
    expect(await refused(taken.channel.code.toLowerCase())).toMatchObject({
      code: 1000,
      msg: "该渠道码已被其他渠道使用，请换一个",
    });
    expect(await refused("NoCode")).toMatchObject({ code: 1000, msg: "该渠道码为系统保留，请换一个" });
    for (const code of ["ABC", "ABC-12", "ABCDEFG"]) {
      const answer = await refused(code);
      expect([answer.code, answer.msg]).toEqual([1000, "参数错误 code: 渠道码须为6位字母或数字"]);
    }
    const badRate = await admin.call("/api/admin/users/update_channel", {
      email: other.email,
      rewardRate: 0.51,
    });
    expect(badRate).toMatchObject({ code: 1000, msg: "参数错误 rewardRate: 返利比例须在 0 到 0.5 之间" });
    const badDays = await admin.call("/api/admin/users/update_channel", {
      email: other.email,
      comsumerDuration: -1,
    });
    expect(badDays.code).toBe(1000);
    const unknown = await admin.call("/api/admin/users/update_channel", { email: "nobody@example.com" });
    expect(unknown).toMatchObject({ code: 1004, msg: "用户不存在" });
    expect(
      (await admin.call("/api/admin/users/get_user_channel", { user_id: other.user.id })).data,
    ).toBeNull();
    expect((await other.client.call<{ type: string }>("/api/user/userinfo")).data.type).toBe("normal");
  });

  test("changing a code takes the invited customers along; the old code is free again", async () => {
    const owner = await makeChannel();
    const oldCode = owner.channel.code;
    const customer = await signUpThrough(oldCode.toLowerCase());
    const changed = await admin.call<Channel>("/api/admin/users/update_channel", {
      email: owner.email,
      name: "改名",
      code: "NEW123",
    });
    expect(changed.data).toMatchObject({
      code: "NEW123",
      name: "改名",
      rewardRate: 0.15,
      comsumerDuration: 30,
    });
    const invited = (await owner.client.call<InvitedUsers>("/api/channel/invited_users")).data;
    expect(invited.count).toBe(1);
    await payWithSandbox(server, customer.client, (await createOrder(customer.client, comboId))._id);
    expect(await walletFen(server, owner.user.id)).toBe(152);
    const reuse = await makeChannel();
    const again = await admin.call<Channel>("/api/admin/users/update_channel", {
      email: reuse.email,
      code: oldCode,
    });
    expect(again.data.code).toBe(oldCode);
    expect((await reuse.client.call<InvitedUsers>("/api/channel/invited_users")).data.count).toBe(0);
  });
});

describe("/channel data", () => {
  test("channel_info: the channel, the rule, and an invite link from the site origin, never the Host header", async () => {
    await server.context.settings.update({ inviteRule: "<b>邀请</b>好友", min_charge_money: 300 });
    const owner = await makeChannel();
    const answer = await owner.client.raw(
      "/api/channel/channel_info",
      JSON.stringify({ data: Buffer.from("{}").toString("base64") }),
      { host: "evil.example.com", "x-forwarded-host": "evil.example.com" },
    );
    const info = ((await answer.json()) as { data: string }).data;
    const decoded = JSON.parse(Buffer.from(info, "base64").toString()) as { data: ChannelInfo };
    expect(decoded.data).toEqual({
      chanelInfo: { code: owner.channel.code, rewardRate: 0.15, comsumerDuration: 30, name: "测试渠道" },
      min_charge_money: 300,
      inviteRule: "<b>邀请</b>好友",
      openChannel: true,
      inviteLink: `${server.url}/?c=${owner.channel.code}#/register`,
    });
    await server.context.settings.update({ site_url: "" });
    try {
      const bare = (await owner.client.call<ChannelInfo>("/api/channel/channel_info")).data;
      expect(bare.inviteLink).toBeNull();
    } finally {
      await server.context.settings.update({ site_url: server.url });
    }
    const plain = await loggedInClient(server);
    const none = (await plain.client.call<ChannelInfo>("/api/channel/channel_info")).data;
    expect(none.chanelInfo).toBeNull();
    expect(none.inviteLink).toBeNull();
  });

  test("invited_users: masked, newest first, counted; a customer sees only their own channel's data", async () => {
    const owner = await makeChannel();
    const first = await signUpThrough(owner.channel.code);
    const second = await signUpThrough(owner.channel.code);
    await payWithSandbox(server, first.client, (await createOrder(first.client, comboId))._id);
    const invited = (await owner.client.call<InvitedUsers>("/api/channel/invited_users")).data;
    expect(invited.count).toBe(2);
    expect(invited.list.map((user) => user.email)).toEqual([maskEmail(second.email), maskEmail(first.email)]);
    expect(invited.list.every((user) => !user.email.includes(first.email.slice(2, 8)))).toBe(true);

    const nosy = await makeChannel();
    for (const payload of [{}, { user_id: owner.user.id }, { email: owner.email }]) {
      const rewards = await nosy.client.call<RewardList>("/api/channel/reward_list", payload);
      expect(rewards.data).toEqual({ count: 0, totalReward: 0, list: [] });
      const users = await nosy.client.call<InvitedUsers>("/api/channel/invited_users", payload);
      expect(users.data).toEqual({ count: 0, list: [] });
    }
    // The invited customer sees nothing of the channel either.
    expect((await first.client.call<RewardList>("/api/channel/reward_list")).data.count).toBe(0);
    expect((await first.client.call<InvitedUsers>("/api/channel/invited_users")).data.count).toBe(0);
  });

  test("visitors get 1002 from /api/channel/*", async () => {
    const visitor = new ApiClient(server.url);
    for (const path of [
      "/api/channel/channel_info",
      "/api/channel/invited_users",
      "/api/channel/reward_list",
    ]) {
      expect((await visitor.call(path)).code).toBe(1002);
    }
  });
});

describe("roles", () => {
  test("the channel admin calls refuse visitor, normal, channel and yunying, and change nothing", async () => {
    const target = await loggedInClient(server);
    const calls: [string, unknown][] = [
      ["/api/admin/users/get_user_channel", { user_id: target.user.id }],
      [
        "/api/admin/users/update_channel",
        { email: target.email, code: "HACK01", rewardRate: 0.5, comsumerDuration: 36_500 },
      ],
    ];
    const intruders: [ApiClient, number][] = [[new ApiClient(server.url), 1002]];
    for (const role of ["normal", "channel", "yunying"] as const) {
      intruders.push([(await loggedInClient(server, { role })).client, 1003]);
    }
    intruders.push([target.client, 1003]);
    for (const [client, code] of intruders) {
      for (const [path, payload] of calls) {
        const answer = await client.call(path, payload);
        expect([path, answer.code]).toEqual([path, code]);
        expect(answer.data ?? null).toBeNull();
      }
    }
    expect(await server.context.db.get("SELECT 1 FROM channels WHERE code = 'HACK01'")).toBeNull();
    expect(
      (await admin.call("/api/admin/users/get_user_channel", { user_id: target.user.id })).data,
    ).toBeNull();
  });
});
