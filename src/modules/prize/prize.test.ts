/**
 * The lucky draw through the API (issue 14 §4): the back office's prize table with its roles,
 * messages, image rule and statistics; the customer's board and draw, which spends permanent
 * traffic only, pays the prize (traffic, days, an own discount coupon) in one transaction, tells
 * the winner, and refuses clearly; 20 simultaneous draws spend no more than the traffic allows.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createOrder, dobuy, makeCombo, startShopServer } from "../../../tests/commerce.ts";
import { ApiClient, loggedInClient, type TestServer } from "../../../tests/harness.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { Code } from "../../rpc/codes.ts";
import { type Coupon, couponEffect, couponEffectText } from "../coupon/schema.ts";
import { FileMsg } from "../file/schema.ts";
import { png } from "../file/test-images.ts";
import { changeTraffic } from "../ledger/service.ts";
import type { Order } from "../order/schema.ts";
import type { Role } from "../user/schema.ts";
import type { DrawBoard, DrawResult, MyDraw, Prize, PrizeList } from "./schema.ts";

let server: TestServer;
let yunying: ApiClient;
let yunyingId: string;
let admin: ApiClient;

beforeAll(async () => {
  server = await startShopServer();
  const signedIn = await loggedInClient(server, { role: "yunying" });
  yunying = signedIn.client;
  yunyingId = signedIn.user.id;
  admin = (await loggedInClient(server, { role: "admin" })).client;
});
afterAll(async () => {
  await server?.close();
});
beforeEach(async () => {
  await server.context.db.run("DELETE FROM prizes");
  await server.context.settings.update({ prizeBaseCost: 1, gameSeat: 8 });
});

const db = () => server.context.db;

async function savePrize(fields: Record<string, unknown>, client = yunying): Promise<Prize> {
  const answer = await client.call<Prize>("/api/yunying/prize/update", {
    name: "一等奖",
    gainTraffic: 10,
    gainVipTime: 0,
    weight: 1,
    ...fields,
  });
  expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
  return answer.data;
}

async function prizeList(client = yunying): Promise<PrizeList> {
  const answer = await client.call<PrizeList>("/api/yunying/prize/list");
  expect(answer.code).toBe(0);
  return answer.data;
}

async function uploadImage(client: ApiClient): Promise<string> {
  const form = new FormData();
  form.append("file", new File([new Uint8Array(png())], "prize.png", { type: "image/png" }));
  const response = await fetch(`${server.url}/api/file/upload`, {
    method: "POST",
    body: form,
    headers: { cookie: client.cookieHeader() },
  });
  const body = (await response.json()) as { file: { filename: string } };
  return `/api/file/downloads/${body.file.filename}`;
}

/** A paid customer holding `g` G of permanent traffic, credited through the ledger. */
async function customerWith(g: number) {
  const signedIn = await loggedInClient(server);
  const userId = signedIn.user.id;
  await db().run("UPDATE users SET paid_user = 1 WHERE id = ?", userId);
  if (g > 0) await giveTraffic(userId, g * GB);
  return { client: signedIn.client, userId };
}

async function giveTraffic(userId: string, bytes: number) {
  await tx(
    db(),
    async () =>
      await changeTraffic(db(), {
        userId,
        type: "buy",
        desc: "test",
        traffic: bytes,
        now: Date.now(),
        timeZone: "UTC",
      }),
  );
}

const userRow = async (userId: string) =>
  (await db().get<{ traffic: number; vip_expire_time: number }>(
    "SELECT traffic, vip_expire_time FROM users JOIN balances ON user_id = id WHERE id = ?",
    userId,
  )) as { traffic: number; vip_expire_time: number };

const recordsOf = async (userId: string, type: string) =>
  await db().all<{ traffic_change: number; vip_change: number; desc: string }>(
    'SELECT traffic_change, vip_change, "desc" FROM traffic_records WHERE user_id = ? AND type = ? ORDER BY id',
    userId,
    type,
  );

async function draw(client: ApiClient) {
  return client.call<DrawResult>("/api/prize/draw");
}

describe("roles", () => {
  const BACK_OFFICE = ["/api/yunying/prize/list", "/api/yunying/prize/update", "/api/yunying/prize/delete"];
  const CUSTOMER = ["/api/prize/board", "/api/prize/draw", "/api/prize/my_draws"];

  test("visitors are sent to log in; normal and channel users may not manage prizes", async () => {
    const visitor = new ApiClient(server.url);
    for (const path of [...BACK_OFFICE, ...CUSTOMER]) {
      const answer = await visitor.call(path, { id: "0123456789abcdef01234567", name: "x" });
      expect({ path, code: answer.code, msg: answer.msg }).toEqual({
        path,
        code: 1002,
        msg: "登录过期，请登录",
      });
    }
    for (const role of ["normal", "channel"] as Role[]) {
      const { client } = await loggedInClient(server, { role });
      for (const path of BACK_OFFICE) {
        const answer = await client.call(path, {
          id: "0123456789abcdef01234567",
          name: "x",
          gainTraffic: 1,
          gainVipTime: 0,
          weight: 1,
        });
        expect({ role, path, code: answer.code, msg: answer.msg }).toEqual({
          role,
          path,
          code: 1003,
          msg: "没有权限",
        });
      }
    }
    expect((await prizeList()).prizes).toEqual([]);
  });

  test("yunying and admin both manage prizes; any logged-in customer may draw", async () => {
    const byYunying = await savePrize({ name: "运营奖" });
    const byAdmin = await savePrize({ name: "管理员奖" }, admin);
    expect((await prizeList(admin)).prizes.map((p) => p._id)).toEqual([byYunying._id, byAdmin._id]);
    expect((await admin.call("/api/yunying/prize/delete", { id: byYunying._id })).code).toBe(0);
    expect((await yunying.call("/api/yunying/prize/delete", { id: byAdmin._id })).code).toBe(0);
    for (const role of ["normal", "channel", "yunying", "admin"] as Role[]) {
      const { client } = await loggedInClient(server, { role });
      expect({ role, code: (await client.call("/api/prize/board")).code }).toEqual({ role, code: 0 });
    }
  });
});

describe("the prize manager", () => {
  test("creates with the fields of seed 001 §3, edits, lists with the §2.15 statistics and deletes", async () => {
    const first = await savePrize({ name: "一等奖", gainTraffic: 10, weight: 1, desc: "大奖" });
    expect(first).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: "一等奖",
      gainTraffic: 10,
      gainVipTime: 0,
      weight: 1,
      desc: "大奖",
      hasDiscountCoupon: false,
      discountValue: 1,
      discountDuration: 1,
      photoUrl: "",
      createTime: expect.any(Number),
    });
    const second = await savePrize({
      name: "二等奖",
      gainTraffic: 2,
      gainVipTime: 3,
      weight: 3,
      hasDiscountCoupon: true,
      discountValue: 0.8,
      discountDuration: 5,
    });
    expect(second).toMatchObject({
      gainVipTime: 3,
      hasDiscountCoupon: true,
      discountValue: 0.8,
      discountDuration: 5,
    });

    // Σ weight 4; Σ traffic × weight = 10 + 6 = 16 G; a draw gives 16 / 4 = 4 G on average, and
    // both prizes give something: the seed's "400.00 %" is the 4 G, the win rate is 100 %.
    expect(await prizeList()).toEqual({
      prizes: [first, second],
      stats: { totalWeight: 4, trafficWeightG: 16, expectedTraffic: 4 * GB, winRate: "100.00%" },
    });

    const edited = await savePrize({ ...first, name: "特等奖", gainTraffic: 1.5, weight: 2 });
    expect(edited).toEqual({ ...first, name: "特等奖", gainTraffic: 1.5, weight: 2 });
    // 1.5 × 2 + 2 × 3 = 9 G over weight 5: 1.8 G a draw.
    expect((await prizeList()).stats).toEqual({
      totalWeight: 5,
      trafficWeightG: 9,
      expectedTraffic: Math.round(1.8 * GB),
      winRate: "100.00%",
    });
    // A blank (谢谢参与) of weight 5: half the draws give nothing, and the average halves.
    const blank = await savePrize({ name: "谢谢参与", gainTraffic: 0, gainVipTime: 0, weight: 5 });
    expect((await prizeList()).stats).toEqual({
      totalWeight: 10,
      trafficWeightG: 9,
      expectedTraffic: Math.round(0.9 * GB),
      winRate: "50.00%",
    });
    // A coupon alone is something won.
    await savePrize({ ...blank, hasDiscountCoupon: true, discountValue: 0.9, discountDuration: 3 });
    expect((await prizeList()).stats.winRate).toBe("100.00%");
    expect((await yunying.call("/api/yunying/prize/delete", { id: blank._id })).code).toBe(0);

    expect((await yunying.call("/api/yunying/prize/delete", { id: first._id })).code).toBe(0);
    expect((await prizeList()).prizes).toEqual([second]);
    const again = await yunying.call("/api/yunying/prize/delete", { id: first._id });
    expect({ code: again.code, msg: again.msg }).toEqual({ code: 1004, msg: "奖品不存在" });
    const ghost = await yunying.call("/api/yunying/prize/update", { ...first, name: "幽灵" });
    expect({ code: ghost.code, msg: ghost.msg }).toEqual({ code: 1004, msg: "奖品不存在" });
    expect((await prizeList()).prizes).toEqual([second]);
  });

  test("an empty table has zero statistics", async () => {
    expect(await prizeList()).toEqual({
      prizes: [],
      stats: { totalWeight: 0, trafficWeightG: 0, expectedTraffic: 0, winRate: "0.00%" },
    });
  });

  test("bad input gets 1000 with a Chinese message on its field, and saves nothing", async () => {
    const base = { name: "奖", gainTraffic: 1, gainVipTime: 0, weight: 1 };
    const coupon = { hasDiscountCoupon: true, discountValue: 0.9, discountDuration: 7 };
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "  " }, "name: 奖品名称不能为空"],
      [{ gainTraffic: -1 }, "gainTraffic: 流量不能为负"],
      [{ gainVipTime: 1.5 }, "gainVipTime: VIP天数须为整数"],
      [{ gainVipTime: -1 }, "gainVipTime: VIP天数不能为负"],
      [{ weight: -1 }, "weight: 权重不能为负"],
      [{ weight: 0.5 }, "weight: 权重须为整数"],
      [{ ...coupon, discountValue: -0.1 }, "discountValue: 折扣须在 0 到 1 之间，以 0.1 为单位（0 为免单）"],
      [{ ...coupon, discountValue: 1.1 }, "discountValue: 折扣须在 0 到 1 之间，以 0.1 为单位（0 为免单）"],
      [{ ...coupon, discountValue: 0.85 }, "discountValue: 折扣须在 0 到 1 之间，以 0.1 为单位（0 为免单）"],
      [{ ...coupon, discountDuration: 0 }, "discountDuration: 优惠券有效天数须为 1 到 3650 的整数"],
      [{ photoUrl: "https://evil.example/x.png" }, `photoUrl: ${FileMsg.notYours}`],
    ];
    for (const [overrides, message] of cases) {
      const answer = await yunying.call("/api/yunying/prize/update", { ...base, ...overrides });
      expect({ overrides, code: answer.code, msg: answer.msg }).toEqual({
        overrides,
        code: 1000,
        msg: `参数错误 ${message}`,
      });
    }
    // Without a coupon its fields are not judged (and are stored as the neutral 1 and 1).
    const plain = await savePrize({
      ...base,
      hasDiscountCoupon: false,
      discountValue: 0,
      discountDuration: 0,
    });
    expect(plain).toMatchObject({ hasDiscountCoupon: false, discountValue: 1, discountDuration: 1 });
    expect((await prizeList()).prizes).toEqual([plain]);
  });

  test("the image is an upload of the editor; one already on the prize stays when another operator edits", async () => {
    const photoUrl = await uploadImage(yunying);
    const prize = await savePrize({ name: "有图", photoUrl });
    expect(prize.photoUrl).toBe(photoUrl);
    const image = await fetch(server.url + photoUrl);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");

    // The admin edits the prize without touching the yunying user's image: it stays.
    const renamed = await savePrize({ ...prize, name: "改名" }, admin);
    expect(renamed.photoUrl).toBe(photoUrl);

    // Attaching someone else's (other) upload is refused, with the file module's message.
    const othersImage = await uploadImage(yunying);
    const refused = await admin.call("/api/yunying/prize/update", { ...prize, photoUrl: othersImage });
    expect({ code: refused.code, msg: refused.msg }).toEqual({ code: 1000, msg: FileMsg.notYours });
    const removed = await savePrize({ ...prize, photoUrl: "" }, admin);
    expect(removed.photoUrl).toBe("");
    expect((await prizeList()).prizes[0]?.photoUrl).toBe("");
    expect(yunyingId).toMatch(/^[0-9a-f]{24}$/);
  });
});

describe("the board", () => {
  test("shows gameSeat seats of the prizes that can be won, repeated in order, without their weights", async () => {
    const a = await savePrize({ name: "A", weight: 1 });
    const b = await savePrize({ name: "B", weight: 5 });
    await savePrize({ name: "谢谢参与（权重 0）", weight: 0 });
    const c = await savePrize({ name: "C", weight: 2, gainTraffic: 0, gainVipTime: 1 });
    const { client } = await customerWith(3);
    const board = (await client.call<DrawBoard>("/api/prize/board")).data;
    expect(board.cost).toBe(1);
    expect(board.permanentTraffic).toBe(3 * GB);
    expect(board.seats.map((seat) => seat.name)).toEqual(["A", "B", "C", "A", "B", "C", "A", "B"]);
    expect(board.seats[0]).toEqual({
      _id: a._id,
      name: "A",
      gainTraffic: 10,
      gainVipTime: 0,
      desc: "",
      hasDiscountCoupon: false,
      discountValue: 1,
      discountDuration: 1,
      photoUrl: "",
    });
    expect(board.seats.map((seat) => seat._id).slice(0, 3)).toEqual([a._id, b._id, c._id]);

    await server.context.settings.update({ gameSeat: 0 });
    const onePerPrize = (await client.call<DrawBoard>("/api/prize/board")).data;
    expect(onePerPrize.seats.map((seat) => seat.name)).toEqual(["A", "B", "C"]);
  });
});

describe("drawing", () => {
  test("costs prizeBaseCost G of permanent traffic, pays the prize in the same go and lands on its seat", async () => {
    await savePrize({ name: "铺位", weight: 0 });
    const prize = await savePrize({ name: "5G 流量", gainTraffic: 5, weight: 1 });
    await server.context.settings.update({ prizeBaseCost: 2, gameSeat: 6 });
    const { client, userId } = await customerWith(3);

    const answer = await draw(client);
    expect(answer.code).toBe(0);
    const result = answer.data;
    expect(result.prize).toMatchObject({ _id: prize._id, name: "5G 流量", gainTraffic: 5 });
    expect(result.couponCode).toBe("");
    expect(result.permanentTraffic).toBe(6 * GB);
    const board = (await client.call<DrawBoard>("/api/prize/board")).data;
    expect(board.seats[result.seat]?._id).toBe(prize._id);

    expect((await userRow(userId)).traffic).toBe(6 * GB);
    expect(await recordsOf(userId, "prize_spend")).toEqual([
      { traffic_change: -2 * GB, vip_change: 0, desc: "幸运抽奖" },
    ]);
    expect(await recordsOf(userId, "prize_reward")).toEqual([
      { traffic_change: 5 * GB, vip_change: 0, desc: "抽奖奖励：5G 流量" },
    ]);

    const draws = (await client.call<MyDraw[]>("/api/prize/my_draws")).data;
    expect(draws).toEqual([
      {
        _id: result.drawId,
        prizeName: "5G 流量",
        cost: 2 * GB,
        gainTraffic: 5 * GB,
        gainVipTime: 0,
        couponCode: "",
        couponExpireTime: 0,
        createTime: expect.any(Number),
      },
    ]);
    // Another customer sees none of it.
    const { client: other } = await customerWith(0);
    expect((await other.call<MyDraw[]>("/api/prize/my_draws")).data).toEqual([]);

    // The winner is told on the bell.
    const notices = (await client.call<{ desc: string; href: string }[]>("/api/user_notive/list")).data;
    expect(notices[0]).toMatchObject({
      desc: "恭喜您在幸运抽奖中抽中「5G 流量」：5G 流量",
      href: "/#/lucky_draw",
    });
  });

  test("a won prize is also a bot message for a customer who bound the bot", async () => {
    await savePrize({ name: "机器人奖", gainTraffic: 1 });
    const { client, userId } = await customerWith(1);
    await db().run(
      "INSERT INTO telegram_bindings (user_id, chat_id, bind_time) VALUES (?, ?, ?)",
      userId,
      424242,
      Date.now(),
    );
    const result = (await draw(client)).data;
    const queued = await db().all<{ text: string; dedupe_key: string }>(
      "SELECT text, dedupe_key FROM telegram_outbox WHERE chat_id = ?",
      424242,
    );
    expect(queued).toEqual([
      { text: "恭喜您在幸运抽奖中抽中「机器人奖」：1G 流量", dedupe_key: `user:prize-won:${result.drawId}` },
    ]);
  });

  test("VIP days extend the time package: from now without one, from its end while one runs", async () => {
    await savePrize({ name: "3 天时长", gainTraffic: 0, gainVipTime: 3 });
    const { client, userId } = await customerWith(2);
    const before = Date.now();
    expect((await draw(client)).code).toBe(0);
    const after = Date.now();
    const first = (await userRow(userId)).vip_expire_time;
    expect(first).toBeGreaterThanOrEqual(before + 3 * DAY_MS);
    expect(first).toBeLessThanOrEqual(after + 3 * DAY_MS);

    expect((await draw(client)).code).toBe(0);
    expect((await userRow(userId)).vip_expire_time).toBe(first + 3 * DAY_MS);
    expect((await recordsOf(userId, "prize_reward")).map((r) => r.traffic_change)).toEqual([0, 0]);
    expect((await recordsOf(userId, "prize_reward"))[1]?.vip_change).toBe(3 * DAY_MS);
    expect((await userRow(userId)).traffic).toBe(0);
  });

  test("the discount coupon is the winner's own: one use on the winner's order, unknown to anyone else", async () => {
    await savePrize({
      name: "八折券",
      gainTraffic: 0,
      hasDiscountCoupon: true,
      discountValue: 0.8,
      discountDuration: 5,
    });
    const winner = await customerWith(1);
    const before = Date.now();
    const result = (await draw(winner.client)).data;
    expect(result.couponCode).toMatch(/^[A-Z]{6}$/);
    const coupon = (await db().get<Record<string, unknown>>(
      "SELECT type, discount, use_num_per_user, number_of_authorizations, owner_user_id, expire_time FROM coupons WHERE code = ?",
      result.couponCode,
    )) as Record<string, number | string>;
    expect(coupon).toMatchObject({
      type: "discount",
      discount: 0.8,
      use_num_per_user: 1,
      number_of_authorizations: 1,
      owner_user_id: winner.userId,
    });
    expect(coupon.expire_time as number).toBeGreaterThanOrEqual(before + 5 * DAY_MS);
    const mine = (await winner.client.call<MyDraw[]>("/api/prize/my_draws")).data[0];
    expect(mine).toMatchObject({ couponCode: result.couponCode, couponExpireTime: coupon.expire_time });

    const combo = await makeCombo(server, { name: "抽奖券测试套餐", price: 100, traffic: 10 * GB });
    const thief = await customerWith(0);
    const theirOrder = await createOrder(thief.client, combo._id);
    const stolen = await thief.client.call<Order>("/api/coupon/orderUseCoupon", {
      order_id: theirOrder._id,
      code: result.couponCode,
    });
    expect({ code: stolen.code, msg: stolen.msg }).toEqual({ code: Code.couponNotFound, msg: "优惠券错误" });

    const order = await createOrder(winner.client, combo._id);
    const used = await winner.client.call<Order>("/api/coupon/orderUseCoupon", {
      order_id: order._id,
      code: result.couponCode,
    });
    expect(used.code).toBe(0);
    expect(used.data).toMatchObject({ coupon_code: result.couponCode, coupon_discount: 20, pay_money: 80 });
    const secondOrder = await createOrder(winner.client, combo._id);
    const twice = await winner.client.call("/api/coupon/orderUseCoupon", {
      order_id: secondOrder._id,
      code: result.couponCode,
    });
    expect(twice.code).toBe(Code.couponUsedUp);
  });

  test("a discount of 0 (seed 001 §5: 0 to 1) is a 免单 coupon: the winner's order costs nothing and is paid at once", async () => {
    const prize = await savePrize({
      name: "免单奖",
      gainTraffic: 0,
      hasDiscountCoupon: true,
      discountValue: 0,
      discountDuration: 3,
    });
    expect(prize).toMatchObject({ hasDiscountCoupon: true, discountValue: 0, discountDuration: 3 });
    const winner = await customerWith(1);
    const result = await draw(winner.client);
    expect(result.code).toBe(0);
    const code = result.data.couponCode;
    expect(code).toMatch(/^[A-Z]{6}$/);
    const notices = (await winner.client.call<{ desc: string }[]>("/api/user_notive/list")).data;
    expect(notices[0]?.desc).toBe(
      `恭喜您在幸运抽奖中抽中「免单奖」：免单券，优惠券码 ${code}（3 天内下单可用）`,
    );

    const combo = await makeCombo(server, { name: "免单测试套餐", price: 88, traffic: 10 * GB });
    const order = await createOrder(winner.client, combo._id);
    const used = await winner.client.call<Order>("/api/coupon/orderUseCoupon", { order_id: order._id, code });
    expect(used.code).toBe(0);
    expect(used.data).toMatchObject({ coupon_code: code, coupon_discount: 88, pay_money: 0 });
    const paid = await dobuy(winner.client, order._id);
    expect(paid.data.status).toBe("paied");
    expect((await userRow(winner.userId)).traffic).toBe(10 * GB);
    // The coupon list and the usage records say what it gave.
    const listed = (await yunying.call<Coupon[]>("/api/yunying/coupon/coupon_list")).data.find(
      (coupon) => coupon.code === code,
    ) as Coupon;
    expect(couponEffectText(couponEffect(listed))).toBe("免单");
    // The manager can edit the winner's coupon (here its name) without being refused for its 0.
    const edited = await yunying.call<Coupon>("/api/yunying/coupon/update_coupon", {
      ...listed,
      name: "免单",
    });
    expect({ code: edited.code, discount: edited.data?.discount }).toEqual({ code: 0, discount: 0 });
  });

  test("refused clearly, with nothing spent: no prizes, all weights 0, short of permanent traffic", async () => {
    const { client, userId } = await customerWith(5);
    const empty = await draw(client);
    expect({ code: empty.code, msg: empty.msg }).toEqual({ code: 1000, msg: "暂无可抽取的奖品，请稍后再来" });
    await savePrize({ name: "不会中", weight: 0 });
    const zero = await draw(client);
    expect({ code: zero.code, msg: zero.msg }).toEqual({ code: 1000, msg: "暂无可抽取的奖品，请稍后再来" });
    expect((await client.call<DrawBoard>("/api/prize/board")).data.seats).toEqual([]);

    await savePrize({ name: "会中", weight: 1 });
    await server.context.settings.update({ prizeBaseCost: 6 });
    const short = await draw(client);
    expect({ code: short.code, msg: short.msg }).toEqual({ code: 1038, msg: "永久流量不足，无法抽奖" });
    expect((await userRow(userId)).traffic).toBe(5 * GB);
    expect(await recordsOf(userId, "prize_spend")).toEqual([]);
    expect((await client.call<MyDraw[]>("/api/prize/my_draws")).data).toEqual([]);

    // A cost of 0 closes the draw rather than handing out prizes for nothing.
    await server.context.settings.update({ prizeBaseCost: 0 });
    const closed = await draw(client);
    expect({ code: closed.code, msg: closed.msg }).toEqual({ code: 1000, msg: "抽奖暂未开放" });
    expect((await userRow(userId)).traffic).toBe(5 * GB);
    await server.context.settings.update({ prizeBaseCost: 1 });

    // An agency customer's traffic is the agency's allocation: no draws (the dashboard hides the entry).
    await server.context.db.run("UPDATE users SET is_agency = 1 WHERE id = ?", userId);
    const agency = await draw(client);
    expect({ code: agency.code, msg: agency.msg }).toEqual({ code: 1003, msg: "代理用户不能参与抽奖" });
    expect((await userRow(userId)).traffic).toBe(5 * GB);
  });

  test("trial traffic does not pay for a draw: only permanent traffic does", async () => {
    await savePrize({ name: "试用", gainTraffic: 0 });
    const { client, userId } = await customerWith(0);
    // 0.5 G permanent + 5 G of running trial traffic (a voucher's grant, part of balances.traffic).
    await giveTraffic(userId, 5.5 * GB);
    await db().run(
      `INSERT INTO trial_grants (user_id, coupon_use_id, amount, remaining, expire_time, create_time)
         VALUES (?, 'test', ?, ?, ?, ?)`,
      userId,
      5 * GB,
      5 * GB,
      Date.now() + DAY_MS,
      Date.now(),
    );
    const board = (await client.call<DrawBoard>("/api/prize/board")).data;
    expect(board.permanentTraffic).toBe(0.5 * GB);
    const refused = await draw(client);
    expect({ code: refused.code, msg: refused.msg }).toEqual({ code: 1038, msg: "永久流量不足，无法抽奖" });
    expect((await userRow(userId)).traffic).toBe(5.5 * GB);
  });

  test("20 simultaneous draws by a customer with traffic for 3 spend for 3; the balance never goes negative", async () => {
    await savePrize({ name: "空奖", gainTraffic: 0 });
    const { client, userId } = await customerWith(3);
    const answers = await Promise.all(Array.from({ length: 20 }, () => draw(client)));
    const codes = answers.map((a) => a.code);
    expect(codes.filter((code) => code === 0)).toHaveLength(3);
    expect(codes.filter((code) => code === 1038)).toHaveLength(17);
    expect((await userRow(userId)).traffic).toBe(0);
    expect(await recordsOf(userId, "prize_spend")).toHaveLength(3);
    const draws = await db().get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM prize_draws WHERE user_id = ?",
      userId,
    );
    expect(draws?.n).toBe(3);
  });
});
