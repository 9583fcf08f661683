/**
 * The coupon manager's calls over HTTP (seed 001 §7 /api/yunying/coupon/*): who may make them, what
 * each answers, every refusal message, the Taobao batch (unique six-letter codes, all or none) and
 * the usage records.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { refuseWrites } from "../../../tests/refuse-writes.ts";
import { tx } from "../../db/db.ts";
import { GB } from "../../lib/traffic.ts";
import type { Role } from "../user/schema.ts";
import { type Coupon, type CouponUseRecord, couponInput } from "./schema.ts";
import {
  type CouponRow,
  findCouponByCode,
  insertCoupon,
  recordCouponUse,
  restoreCouponUse,
} from "./service.ts";

let server: TestServer;
const clients = {} as Record<Role | "visitor", ApiClient>;
let yunying: ApiClient;

beforeAll(async () => {
  server = await startTestServer();
  for (const role of ["normal", "channel", "yunying", "admin"] as const)
    clients[role] = (await loggedInClient(server, { role })).client;
  clients.visitor = new ApiClient(server.url);
  yunying = clients.yunying;
});
afterAll(async () => {
  await server?.close();
});

const COUPON = "/api/yunying/coupon";
const couponCount = async () =>
  (await server.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM coupons"))?.n ?? 0;

async function save(fields: Record<string, unknown>, client = yunying) {
  return client.call<Coupon>(`${COUPON}/update_coupon`, fields);
}

async function saved(fields: Record<string, unknown>): Promise<Coupon> {
  const answer = await save(fields);
  expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
  return answer.data;
}

describe("roles", () => {
  test("visitors must log in (1002), normal and channel users are refused (1003), nothing is applied", async () => {
    const victim = await saved({ type: "cash", code: "ROLEKEEP", forMoney: 1 });
    const before = await couponCount();
    const payloads: Record<string, unknown> = {
      coupon_list: {},
      update_coupon: { type: "cash", code: "ROLEMADE", forMoney: 1 },
      batch_create: { type: "freeUse", trafficG: 1, count: 3 },
      delete_coupon: { id_list: [victim._id] },
      coupon_record_list: {},
    };
    for (const [who, code] of [
      ["visitor", 1002],
      ["normal", 1003],
      ["channel", 1003],
    ] as const) {
      for (const [call, payload] of Object.entries(payloads)) {
        const answer = await clients[who].call(`${COUPON}/${call}`, payload);
        expect({ who, call, code: answer.code, data: answer.data }).toEqual({ who, call, code, data: null });
      }
    }
    expect(await couponCount()).toBe(before);
    expect(await findCouponByCode(server.context.db, "ROLEKEEP")).not.toBeNull();
    expect(await findCouponByCode(server.context.db, "ROLEMADE")).toBeNull();
  });

  test("yunying and admin may make every call", async () => {
    for (const who of ["yunying", "admin"] as const) {
      const client = clients[who];
      const made = await save({ type: "cash", code: `BY${who}`, forMoney: 1 }, client);
      expect(made.code).toBe(0);
      const batch = await client.call<Coupon[]>(`${COUPON}/batch_create`, {
        type: "freeUse",
        trafficG: 1,
        count: 2,
      });
      expect(batch.code).toBe(0);
      const list = await client.call<Coupon[]>(`${COUPON}/coupon_list`, {});
      expect(list.code).toBe(0);
      expect(list.data.map((c) => c.code)).toContain(`BY${who}`);
      expect((await client.call(`${COUPON}/coupon_record_list`, {})).code).toBe(0);
      const ids = [made.data._id, ...batch.data.map((c) => c._id)];
      expect(await client.call(`${COUPON}/delete_coupon`, { id_list: ids })).toMatchObject({
        code: 0,
        data: { deleted: 3 },
      });
    }
  });
});

describe("update_coupon", () => {
  test("creates from the seed's wire fields and answers the saved coupon; with _id it edits", async () => {
    const created = await saved({
      name: "淘宝流量",
      type: "freeUse",
      code: "",
      taobao: true,
      trafficG: 8,
      traffixHaveLimitTime: true,
      traffixLimitTime: 72,
      useNumPerUser: 1,
      NumberOfAuthorizations: 50,
      expireTime: "2031-01-31",
    });
    expect(created).toMatchObject({
      name: "淘宝流量",
      type: "freeUse",
      taobao: true,
      traffic: 8 * GB,
      traffixHaveLimitTime: true,
      traffixLimitTime: 72,
      useNumPerUser: 1,
      NumberOfAuthorizations: 50,
      authTimes: 0,
      ownerEmail: "",
    });
    expect(created.code).toMatch(/^[A-Z]{6}$/);
    expect(created.expireTime).toBeGreaterThan(Date.UTC(2031, 0, 30));

    const edited = await saved({ ...created, name: "改了", trafficG: undefined, traffic: 2 * GB });
    expect(edited).toEqual({ ...created, name: "改了", traffic: 2 * GB });
    const list = (await yunying.call<Coupon[]>(`${COUPON}/coupon_list`, {})).data;
    expect(list.filter((c) => c._id === created._id)).toEqual([edited]);
  });

  test("each bad field is refused with its message and nothing is saved", async () => {
    const before = await couponCount();
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "voucher" }, "优惠券类型错误"],
      [{ type: "discount", discount: 0.05 }, "折扣最小 0.1"],
      [{ type: "discount", discount: 1.5 }, "折扣最大 1"],
      [{ type: "cash" }, "现金券金额必须大于 0"],
      [{ type: "cash", forMoney: 1.234 }, "金额最多两位小数"],
      [{ type: "freeUse" }, "流量券的流量必须大于 0"],
      [{ type: "freeTime" }, "时长券的天数必须大于 0"],
      [{ type: "cash", forMoney: 1, expireTime: "2031-02-30" }, "过期时间格式应为 YYYY-MM-DD"],
      [{ type: "cash", forMoney: 1, code: "含中文" }, "优惠券码只能包含字母、数字、- 和 _"],
      [{ type: "cash", forMoney: 1, useNumPerUser: -1 }, "useNumPerUser"],
      [{ type: "cash", forMoney: 1, useNumPerUser: 1.5 }, "useNumPerUser"],
      [{ type: "cash", forMoney: 1, _id: "nope" }, "id 格式错误"],
    ];
    for (const [fields, message] of cases) {
      const answer = await save(fields);
      expect({ fields, code: answer.code }).toEqual({ fields, code: 1000 });
      expect(answer.msg).toContain(message);
    }
    expect(await couponCount()).toBe(before);
  });

  test("a taken code (any letter case) and an unknown id are refused", async () => {
    await saved({ type: "cash", code: "TAKEN1", forMoney: 1 });
    expect(await save({ type: "cash", code: "taken1", forMoney: 1 })).toMatchObject({
      code: 1000,
      msg: "优惠券码已存在: taken1",
    });
    expect(
      await save({ _id: "0123456789abcdef01234567", type: "cash", code: "GHOST1", forMoney: 1 }),
    ).toMatchObject({ code: 1004, msg: "优惠券不存在" });
  });

  test("per-user limit 0 (no limit) is accepted", async () => {
    expect(
      (await saved({ type: "cash", code: "NOLIMIT", forMoney: 1, useNumPerUser: 0 })).useNumPerUser,
    ).toBe(0);
  });
});

describe("batch_create", () => {
  test("makes N Taobao coupons of the given fields, each with its own six-letter code", async () => {
    const answer = await yunying.call<Coupon[]>(`${COUPON}/batch_create`, {
      name: "淘宝 8G",
      type: "freeUse",
      trafficG: 8,
      useNumPerUser: 1,
      NumberOfAuthorizations: 1,
      expireTime: "2031-12-31",
      count: 50,
    });
    expect(answer.code).toBe(0);
    const coupons = answer.data;
    expect(coupons).toHaveLength(50);
    const codes = coupons.map((c) => c.code);
    expect(new Set(codes).size).toBe(50);
    for (const coupon of coupons) {
      expect(coupon.code).toMatch(/^[A-Z]{6}$/);
      expect(coupon).toMatchObject({ name: "淘宝 8G", type: "freeUse", taobao: true, traffic: 8 * GB });
    }
    const listed = new Set(
      (await yunying.call<Coupon[]>(`${COUPON}/coupon_list`, {})).data.map((c) => c.code),
    );
    for (const code of codes) expect(listed.has(code)).toBe(true);
  });

  test("a random code some coupon already has is drawn again", async () => {
    await saved({ type: "cash", code: "AAAAAA", forMoney: 1 });
    const real = crypto.getRandomValues.bind(crypto);
    let forced = 0;
    // The first two six-byte draws give AAAAAA (bytes of 0 are the letter A), then real randomness.
    crypto.getRandomValues = (<T extends ArrayBufferView | null>(array: T): T => {
      if (array instanceof Uint8Array && array.length === 6 && forced < 2) {
        forced += 1;
        array.fill(0);
        return array;
      }
      return real(array as never) as T;
    }) as typeof crypto.getRandomValues;
    try {
      const answer = await yunying.call<Coupon[]>(`${COUPON}/batch_create`, {
        type: "cash",
        forMoney: 2,
        count: 2,
      });
      expect(answer.code).toBe(0);
      expect(forced).toBe(2);
      expect(answer.data).toHaveLength(2);
      expect(answer.data.map((c) => c.code)).not.toContain("AAAAAA");
    } finally {
      crypto.getRandomValues = real;
    }
  });

  test("all or none: a failure on the fifth coupon leaves no coupon of the batch", async () => {
    const dropTrigger = await refuseWrites(server.context.db, {
      name: "fail_fifth",
      table: "coupons",
      event: "INSERT",
      message: "boom",
      when: "NEW.name = 'boom' AND (SELECT COUNT(*) FROM coupons WHERE name = 'boom') >= 4",
    });
    try {
      const answer = await yunying.call(`${COUPON}/batch_create`, {
        name: "boom",
        type: "freeTime",
        vipDay: 7,
        count: 10,
      });
      expect(answer.code).toBe(999);
      const left = (
        await server.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM coupons WHERE name = 'boom'")
      )?.n;
      expect(left).toBe(0);
    } finally {
      await dropTrigger();
    }
  });

  test("count 1 to 1000 and the coupon's own checks; nothing is made when refused", async () => {
    const before = await couponCount();
    for (const [fields, message] of [
      [{ type: "freeUse", trafficG: 1, count: 0 }, "数量至少为 1"],
      [{ type: "freeUse", trafficG: 1, count: 1001 }, "数量最多为 1000"],
      [{ type: "freeUse", trafficG: 1, count: 2.5 }, "数量必须是整数"],
      [{ type: "freeUse", trafficG: 1 }, "count"],
      [{ type: "freeUse", count: 3 }, "流量券的流量必须大于 0"],
      [{ type: "discount", discount: 0.05, count: 3 }, "折扣最小 0.1"],
    ] as const) {
      const answer = await yunying.call(`${COUPON}/batch_create`, fields);
      expect({ fields, code: answer.code }).toEqual({ fields, code: 1000 });
      expect(answer.msg).toContain(message);
    }
    expect(await couponCount()).toBe(before);
  });

  test("taobao: false makes ordinary coupons", async () => {
    const answer = await yunying.call<Coupon[]>(`${COUPON}/batch_create`, {
      type: "freeTime",
      vipDay: 3,
      taobao: false,
      count: 1,
    });
    expect(answer.data[0]).toMatchObject({ taobao: false, vipDay: 3 });
  });
});

describe("delete_coupon", () => {
  test("deletes the listed ids and says how many there were", async () => {
    const a = await saved({ type: "cash", code: "DELA", forMoney: 1 });
    const b = await saved({ type: "cash", code: "DELB", forMoney: 1 });
    const answer = await yunying.call(`${COUPON}/delete_coupon`, {
      id_list: [a._id, b._id, "0123456789abcdef01234567"],
    });
    expect(answer).toMatchObject({ code: 0, data: { deleted: 2 } });
    expect(await findCouponByCode(server.context.db, "DELA")).toBeNull();
    expect(await findCouponByCode(server.context.db, "DELB")).toBeNull();
  });

  test("an empty list or a malformed id is refused", async () => {
    expect((await yunying.call(`${COUPON}/delete_coupon`, { id_list: [] })).code).toBe(1000);
    const bad = await yunying.call(`${COUPON}/delete_coupon`, { id_list: ["x"] });
    expect(bad).toMatchObject({ code: 1000 });
    expect(bad.msg).toContain("id 格式错误");
  });
});

describe("coupon_list and coupon_record_list", () => {
  test("a customer's own lucky-draw coupon is listed with its owner's e-mail", async () => {
    const owner = await loggedInClient(server);
    const fields = couponInput.parse({ name: "抽奖折扣", type: "discount", discount: 0.8 });
    await tx(
      server.context.db,
      async () => await insertCoupon(server.context, fields, "PRIZE80", Date.now(), owner.user.id),
    );
    const list = (await yunying.call<Coupon[]>(`${COUPON}/coupon_list`, {})).data;
    expect(list.find((c) => c.code === "PRIZE80")).toMatchObject({
      name: "抽奖折扣",
      discount: 0.8,
      ownerEmail: owner.email,
    });
    // Editing it keeps it the customer's own.
    const coupon = list.find((c) => c.code === "PRIZE80") as Coupon;
    expect((await saved({ ...coupon, name: "抽奖八折" })).ownerEmail).toBe(owner.email);
  });

  test("the latest records, 100 unless a limit is given, used or restored", async () => {
    const customer = await loggedInClient(server);
    const coupon = (await findCouponByCode(
      server.context.db,
      (
        await saved({
          type: "freeTime",
          code: "RECORDS",
          vipDay: 7,
          NumberOfAuthorizations: 0,
          useNumPerUser: 0,
        })
      ).code,
    )) as CouponRow;
    const base = Date.now();
    const uses = await tx(server.context.db, async () => {
      const made: string[] = [];
      for (let i = 0; i < 105; i++) {
        made.push(
          await recordCouponUse(server.context.db, {
            coupon,
            userId: customer.user.id,
            addDay: 7,
            now: base + i,
          }),
        );
      }
      return made;
    });
    await tx(
      server.context.db,
      async () => await restoreCouponUse(server.context.db, uses[104] as string, base + 200),
    );

    const all = await yunying.call<CouponUseRecord[]>(`${COUPON}/coupon_record_list`, {});
    expect(all.data).toHaveLength(100);
    const two = (await yunying.call<CouponUseRecord[]>(`${COUPON}/coupon_record_list`, { limit: 2 })).data;
    expect(two.map(({ _id, time, ...rest }) => rest)).toEqual([
      {
        email: customer.email,
        code: "RECORDS",
        type: "freeTime",
        add_traffic: 0,
        add_day: 7,
        add_money: 0,
        discount: 1,
        is_delete: true,
      },
      {
        email: customer.email,
        code: "RECORDS",
        type: "freeTime",
        add_traffic: 0,
        add_day: 7,
        add_money: 0,
        discount: 1,
        is_delete: false,
      },
    ]);
    for (const limit of [0, 1.5, 100_001]) {
      expect((await yunying.call(`${COUPON}/coupon_record_list`, { limit })).code).toBe(1000);
    }
  });
});
