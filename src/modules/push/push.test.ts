/**
 * Traffic transfers over real HTTP (seed 000 §2 /push, §3 Push, §5, §7 /api/push/*, §8 1037–1040,
 * §9): every call and refusal message, the roles, only permanent traffic moving, the cost rate fixed
 * at creation, one winner among concurrent receivers (and between 撤回 and a receive), the return
 * of unreceived transfers, the notices and bot messages, the rate limits at their real size, and
 * balances.traffic = Σ traffic_change for everyone involved.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bindChat, outboxTexts } from "../../../tests/fakes/telegram.ts";
import { ApiClient, loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { recordTraffic } from "../../../tests/traffic.ts";
import { tx } from "../../db/db.ts";
import { GB } from "../../lib/traffic.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { changeTraffic } from "../ledger/service.ts";
import type { Notice } from "../notice/schema.ts";
import type { TrafficRecordType } from "../traffic/schema.ts";
import { addTrialGrant } from "../trial/service.ts";
import type { Role } from "../user/schema.ts";
import {
  PUSH_CODE_LENGTH,
  PUSH_RETURN_DAYS,
  PUSHES_PER_HOUR,
  type Push,
  type PushList,
  PushMsg,
  RECEIVE_FAILURES_PER_10_MIN,
} from "./schema.ts";
import { PUSH_RETURN_MS, receivePush, returnExpiredPushes } from "./service.ts";

let server: TestServer;

beforeAll(async () => {
  // Rate limits at their real size: every test uses its own accounts.
  server = await startTestServer({ rateLimitScale: 1 });
});
afterAll(async () => {
  await server?.close();
});

type Customer = Awaited<ReturnType<typeof loggedInClient>>;

const db = () => server.context.db;

/** A customer holding `g` G of permanent traffic (a purchase). */
async function customer(g = 0, role: Role = "normal"): Promise<Customer> {
  const who = await loggedInClient(server, { role });
  if (g > 0) await grant(who.user.id, "buy", g * GB);
  return who;
}

const grant = async (userId: string, type: TrafficRecordType, bytes: number) =>
  await recordTraffic(server, userId, type, bytes);

/** Trial traffic (a freeUse voucher with a time limit): in balances.traffic, not transferable. */
async function grantTrial(userId: string, bytes: number) {
  const now = Date.now();
  await tx(db(), async () => {
    await changeTraffic(db(), {
      userId,
      type: "coupon",
      desc: "体验券",
      traffic: bytes,
      now,
      timeZone: "Asia/Shanghai",
    });
    await addTrialGrant(db(), {
      userId,
      couponUseId: "test",
      amount: bytes,
      expireTime: now + 86_400_000,
      now,
    });
  });
}

const trafficOf = async (userId: string) =>
  (await db().get<{ traffic: number }>("SELECT traffic FROM balances WHERE user_id = ?", userId))?.traffic ??
  -1;

const records = async (userId: string, type: TrafficRecordType) =>
  await db().all<{ traffic_change: number; desc: string }>(
    'SELECT traffic_change, "desc" FROM traffic_records WHERE user_id = ? AND type = ? ORDER BY id',
    userId,
    type,
  );

const pushRow = async (code: string) =>
  await db().get<{ state: string; to_user_id: string | null }>(
    "SELECT state, to_user_id FROM pushes WHERE code = ?",
    code,
  );

const create = (who: Customer, pushNumber: unknown) =>
  who.client.call<Push>("/api/push/create", { pushNumber });
const receive = (who: Customer, code: string) => who.client.call<Push>("/api/push/receive", { code });
const cancel = (who: Customer, code: string) => who.client.call<Push>("/api/push/cancel", { code });
const list = async (who: Customer) => (await who.client.call<PushList>("/api/push/list")).data;
const notices = async (who: Customer) => (await who.client.call<Notice[]>("/api/user_notive/list")).data;

async function created(who: Customer, pushNumber = 20): Promise<Push> {
  const answer = await create(who, pushNumber);
  expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
  return answer.data;
}

function expectRefused(answer: { code: number; msg: string; data: unknown }, code: number, msg: string) {
  expect({ code: answer.code, msg: answer.msg, data: answer.data }).toEqual({ code, msg, data: null });
}

async function catchError(fn: () => Promise<unknown>): Promise<RpcError | null> {
  try {
    await fn();
    return null;
  } catch (error) {
    if (error instanceof RpcError) return error;
    throw error;
  }
}

describe("roles", () => {
  test("a visitor gets 1002 for every call", async () => {
    const visitor = new ApiClient(server.url);
    for (const [path, payload] of [
      ["/api/push/list", {}],
      ["/api/push/create", { pushNumber: 20 }],
      ["/api/push/receive", { code: "ABCDEFGHJKLM" }],
      ["/api/push/cancel", { code: "ABCDEFGHJKLM" }],
    ] as const) {
      const answer = await visitor.call(path, payload);
      expect({ path, code: answer.code }).toEqual({ path, code: Code.notLoggedIn });
    }
  });

  test("admin, normal, channel and yunying accounts list, create and receive", async () => {
    for (const role of ["admin", "normal", "channel", "yunying"] as const) {
      const sender = await customer(20, role);
      const receiver = await customer(0, role);
      const listed = await list(sender);
      expect({ role, minPushNum: listed.minPushNum, costRate: listed.costRate }).toEqual({
        role,
        minPushNum: 20,
        costRate: 0.2,
      });
      const push = await created(sender);
      expect({ role, code: (await receive(receiver, push.code)).code }).toEqual({ role, code: 0 });
      expect(await trafficOf(receiver.user.id)).toBe(16 * GB);
    }
  });
});

describe("/api/push/list", () => {
  test("a new account: the seed's minimum and rate, how long a transfer waits, no transfers", async () => {
    const who = await customer();
    expect(await list(who)).toEqual({ minPushNum: 20, costRate: 0.2, returnDays: 7, pushList: [] });
  });

  test("sent and received transfers, newest first; only the sender sees the code", async () => {
    const a = await customer(100);
    const b = await customer(100);
    const first = await created(a, 20);
    const fromB = await created(b, 30);
    const second = await created(a, 25);
    expect((await receive(a, fromB.code)).code).toBe(0);
    expect((await receive(b, first.code)).code).toBe(0);

    const seenByA = (await list(a)).pushList;
    expect(
      seenByA.map((push) => [push._id, push.direction, push.state, push.pushNumber, push.receiveNumber]),
    ).toEqual([
      [second._id, "sent", "created", 25, 20],
      [fromB._id, "received", "received", 30, 24],
      [first._id, "sent", "received", 20, 16],
    ]);
    expect(seenByA.map((push) => push.code)).toEqual([second.code, "", first.code]);
    const waiting = seenByA[0] as Push;
    expect(waiting.returnTime).toBe(waiting.createTime + PUSH_RETURN_MS);
    expect((seenByA[2] as Push).returnTime).toBe(0);
    expect((seenByA[2] as Push).finishTime).toBeGreaterThanOrEqual((seenByA[2] as Push).createTime);

    const seenByB = (await list(b)).pushList;
    expect(seenByB.map((push) => [push._id, push.direction, push.code === ""])).toEqual([
      [fromB._id, "sent", false],
      [first._id, "received", true],
    ]);
  });

  test("the minimum and rate come from the settings", async () => {
    const who = await customer();
    await server.context.settings.update({ minPushNum: 50, pushCostRate: 0.1 });
    try {
      const listed = await list(who);
      expect([listed.minPushNum, listed.costRate]).toEqual([50, 0.1]);
    } finally {
      await server.context.settings.update({ minPushNum: 20, pushCostRate: 0.2 });
    }
  });
});

describe("/api/push/create", () => {
  test("returns a fresh 12-character code and moves the amount out of the sender's traffic", async () => {
    const a = await customer(30);
    const push = await created(a, 20);
    expect(push).toMatchObject({ pushNumber: 20, receiveNumber: 16, state: "created", direction: "sent" });
    expect(push.code).toMatch(new RegExp(`^[A-HJ-NP-Z2-9]{${PUSH_CODE_LENGTH}}$`));
    expect(await trafficOf(a.user.id)).toBe(10 * GB);
    expect(await records(a.user.id, "push_spend")).toEqual([
      { traffic_change: -20 * GB, desc: "转赠流量 20G" },
    ]);
    const other = await created(await customer(20), 20);
    expect(other.code).not.toBe(push.code);
  });

  test("1037 below the minimum or not whole G; nothing is taken", async () => {
    const a = await customer(100);
    for (const amount of [19, 0, -20, 19.99]) expectRefused(await create(a, amount), 1037, "最低转赠20G");
    expectRefused(await create(a, 20.5), 1037, PushMsg.amountNotWhole);
    await server.context.settings.update({ minPushNum: 30 });
    try {
      expectRefused(await create(a, 25), 1037, "最低转赠30G");
    } finally {
      await server.context.settings.update({ minPushNum: 20 });
    }
    expect(await trafficOf(a.user.id)).toBe(100 * GB);
    expect(await records(a.user.id, "push_spend")).toEqual([]);
    expect((await list(a)).pushList).toEqual([]);
  });

  test("1000 for an amount that is not a number", async () => {
    const a = await customer(100);
    for (const amount of ["20", null, undefined]) {
      const answer = await create(a, amount);
      expect(answer.code).toBe(Code.badInput);
      expect(answer.msg).toContain(PushMsg.amountEmpty);
    }
  });

  test("1038 when the permanent traffic is short; the message says how much may be sent", async () => {
    const a = await customer(25);
    expectRefused(await create(a, 30), 1038, PushMsg.notEnough("25"));
    expect(await trafficOf(a.user.id)).toBe(25 * GB);
    expect((await list(a)).pushList).toEqual([]);
  });

  test("trial traffic is never transferable, only the permanent part moves", async () => {
    const a = await customer(10);
    await grantTrial(a.user.id, 30 * GB);
    expect(await trafficOf(a.user.id)).toBe(40 * GB);
    expectRefused(await create(a, 20), 1038, PushMsg.notEnough("10"));
    expect(await trafficOf(a.user.id)).toBe(40 * GB);
    await grant(a.user.id, "buy", 15 * GB);
    await created(a, 25);
    // The 30 G of trial traffic stay: 10 + 15 permanent went.
    expect(await trafficOf(a.user.id)).toBe(30 * GB);
    expectRefused(await create(a, 20), 1038, PushMsg.notEnough("0"));
  });

  test("the cost rate is the one in force at creation", async () => {
    const a = await customer(20);
    const b = await customer();
    const push = await created(a, 20);
    await server.context.settings.update({ pushCostRate: 0.5 });
    try {
      const got = await receive(b, push.code);
      expect(got.data.receiveNumber).toBe(16);
    } finally {
      await server.context.settings.update({ pushCostRate: 0.2 });
    }
    expect(await trafficOf(b.user.id)).toBe(16 * GB);
    expect(await records(b.user.id, "push_receive")).toEqual([
      { traffic_change: 16 * GB, desc: "接收转赠 16G（转赠 20G，手续费 20%）" },
    ]);
  });

  test(`1039 after ${PUSHES_PER_HOUR} transfers in an hour; refused attempts do not count`, async () => {
    const a = await customer(20 * (PUSHES_PER_HOUR + 1));
    for (let i = 0; i < 3; i++) expect((await create(a, 5)).code).toBe(1037);
    for (let i = 0; i < PUSHES_PER_HOUR; i++) await created(a, 20);
    expectRefused(await create(a, 20), 1039, "转赠过于频繁，请稍后再试");
    expect(await trafficOf(a.user.id)).toBe(20 * GB);
    expect((await list(a)).pushList).toHaveLength(PUSHES_PER_HOUR);
  });

  test("an agency account may not transfer (1003)", async () => {
    const a = await customer(50);
    await db().run("UPDATE users SET is_agency = 1 WHERE id = ?", a.user.id);
    expectRefused(await create(a, 20), Code.forbidden, PushMsg.agencyRefused);
    expect(await trafficOf(a.user.id)).toBe(50 * GB);
  });
});

describe("/api/push/receive", () => {
  test("credits pushNumber × (1 − rate) once; the sender gets a bell notice and a bot message", async () => {
    const a = await customer(20);
    const b = await customer(3);
    await bindChat(server, a.user.id, 914_001);
    const push = await created(a, 20);
    // Pasted with blanks and in lower case, as people do.
    const answer = await receive(b, ` ${push.code.slice(0, 6).toLowerCase()} ${push.code.slice(6)} `);
    expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
    expect(answer.data).toMatchObject({
      _id: push._id,
      pushNumber: 20,
      receiveNumber: 16,
      state: "received",
      direction: "received",
      code: "",
    });
    expect(await trafficOf(b.user.id)).toBe(19 * GB);
    expect(await pushRow(push.code)).toEqual({ state: "received", to_user_id: b.user.id });
    const text = "您转赠的 20G 流量已被领取，对方实际到账 16G";
    expect((await notices(a)).map((notice) => [notice.desc, notice.href])).toEqual([[text, "/#/push"]]);
    expect(await outboxTexts(server, 914_001)).toEqual([text]);
    expect(await notices(b)).toEqual([]);

    expectRefused(await receive(b, push.code), 1040, PushMsg.codeInvalid);
    expectRefused(await receive(await customer(), push.code), 1040, PushMsg.codeInvalid);
    expect(await trafficOf(b.user.id)).toBe(19 * GB);
    expect(await outboxTexts(server, 914_001)).toEqual([text]);
  });

  test("1040 for an unknown code, and for one's own code (with how to take it back)", async () => {
    const a = await customer(20);
    const push = await created(a, 20);
    expectRefused(await receive(a, push.code), 1040, PushMsg.ownCode);
    expect(PushMsg.ownCode).toBe("不能领取自己的转赠码，如需取回请在列表中撤回");
    expect((await pushRow(push.code))?.state).toBe("created");
    expect(await trafficOf(a.user.id)).toBe(0);
    expectRefused(await receive(await customer(), "ZZZZZZZZZZZZ"), 1040, "转赠码不存在或已失效");
    const empty = await receive(await customer(), "   ");
    expect([empty.code, empty.msg]).toEqual([Code.badInput, `参数错误 code: ${PushMsg.codeEmpty}`]);
  });

  test("20 simultaneous receives of one code by 20 customers: one is credited, 19 get 1040", async () => {
    const a = await customer(20);
    const push = await created(a, 20);
    const receivers = await Promise.all(Array.from({ length: 20 }, () => customer()));
    const answers = await Promise.all(receivers.map((who) => receive(who, push.code)));
    expect(answers.filter((answer) => answer.code === 0)).toHaveLength(1);
    expect(
      answers.filter((answer) => answer.code === 1040 && answer.msg === PushMsg.codeInvalid),
    ).toHaveLength(19);
    const credited: Customer[] = [];
    for (const who of receivers) if ((await trafficOf(who.user.id)) > 0) credited.push(who);
    expect(credited).toHaveLength(1);
    expect(await trafficOf((credited[0] as Customer).user.id)).toBe(16 * GB);
    expect(
      (await Promise.all(receivers.map((who) => records(who.user.id, "push_receive")))).flat(),
    ).toHaveLength(1);
    expect((await pushRow(push.code))?.to_user_id).toBe((credited[0] as Customer).user.id);
  });

  test(`1039 after ${RECEIVE_FAILURES_PER_10_MIN} refused tries, even with a good code; a good try costs nothing`, async () => {
    const a = await customer(40);
    const guesser = await customer();
    const good = await created(a, 20);
    expect((await receive(guesser, good.code)).code).toBe(0);
    const target = await created(a, 20);
    for (let i = 0; i < RECEIVE_FAILURES_PER_10_MIN; i++) {
      expect((await receive(guesser, `WRONGCODE${String(i).padStart(3, "2")}`)).code).toBe(1040);
    }
    expectRefused(await receive(guesser, target.code), 1039, "尝试次数过多，请稍后再试");
    expect((await pushRow(target.code))?.state).toBe("created");
    expect(await trafficOf(guesser.user.id)).toBe(16 * GB);
    // Another account is not affected.
    expect((await receive(await customer(), target.code)).code).toBe(0);
  });
});

describe("/api/push/cancel (撤回) and the return of unreceived transfers", () => {
  test("the sender takes a waiting transfer back in full, once; the code stops working", async () => {
    const a = await customer(30);
    const push = await created(a, 20);
    const answer = await cancel(a, push.code);
    expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
    expect(answer.data).toMatchObject({ _id: push._id, state: "returned", code: push.code });
    expect(await trafficOf(a.user.id)).toBe(30 * GB);
    expect(await records(a.user.id, "push_spend")).toEqual([
      { traffic_change: -20 * GB, desc: "转赠流量 20G" },
      { traffic_change: 20 * GB, desc: "转赠退回 20G（已撤回）" },
    ]);
    expectRefused(await cancel(a, push.code), 1040, PushMsg.alreadyReturned);
    expectRefused(await receive(await customer(), push.code), 1040, PushMsg.codeInvalid);
    expect(await trafficOf(a.user.id)).toBe(30 * GB);
  });

  test("nobody else can cancel a transfer, and a received one cannot be cancelled", async () => {
    const a = await customer(20);
    const b = await customer();
    const push = await created(a, 20);
    expectRefused(await cancel(b, push.code), 1040, PushMsg.codeInvalid);
    expectRefused(await cancel(b, "ZZZZZZZZZZZZ"), 1040, PushMsg.codeInvalid);
    expect((await pushRow(push.code))?.state).toBe("created");
    expect((await receive(b, push.code)).code).toBe(0);
    expectRefused(await cancel(a, push.code), 1040, PushMsg.alreadyReceived);
    expect([await trafficOf(a.user.id), await trafficOf(b.user.id)]).toEqual([0, 16 * GB]);
  });

  test("撤回 racing a receive: exactly one of them wins, and the traffic moves once", async () => {
    for (let round = 0; round < 5; round++) {
      const a = await customer(20);
      const b = await customer();
      const push = await created(a, 20);
      // Either request may reach the server first.
      const [cancelled, received] =
        round % 2 === 0
          ? await Promise.all([cancel(a, push.code), receive(b, push.code)])
          : await Promise.all([receive(b, push.code), cancel(a, push.code)]).then(
              ([r, c]) => [c, r] as const,
            );
      expect([cancelled.code, received.code].sort()).toEqual([0, 1040]);
      const state = (await pushRow(push.code))?.state;
      if (cancelled.code === 0) {
        expect([state, await trafficOf(a.user.id), await trafficOf(b.user.id)]).toEqual([
          "returned",
          20 * GB,
          0,
        ]);
      } else {
        expect([state, await trafficOf(a.user.id), await trafficOf(b.user.id)]).toEqual([
          "received",
          0,
          16 * GB,
        ]);
      }
    }
  });

  test(`a transfer nobody receives in ${PUSH_RETURN_DAYS} days goes back by itself, once, with a notice and a bot message`, async () => {
    const a = await customer(20);
    const b = await customer();
    await bindChat(server, a.user.id, 914_002);
    const push = await created(a, 20);
    const due = push.createTime + PUSH_RETURN_MS;
    expect(await returnExpiredPushes(server.context, due - 1, a.user.id)).toBe(0);
    // At the moment it is due, it can no longer be received, swept or not.
    const late = await catchError(async () => await receivePush(server.context, b.user.id, push.code, due));
    expect([late?.code, late?.message]).toEqual([1040, PushMsg.codeInvalid]);
    expect(await returnExpiredPushes(server.context, due, a.user.id)).toBe(1);
    expect(await returnExpiredPushes(server.context, due + 1, a.user.id)).toBe(0);
    expect(await trafficOf(a.user.id)).toBe(20 * GB);
    expect((await records(a.user.id, "push_spend")).map((record) => record.desc)).toEqual([
      "转赠流量 20G",
      "转赠退回 20G（7天未领取）",
    ]);
    const text = "您转赠的 20G 流量 7 天无人领取，已全额退回";
    expect((await notices(a)).map((notice) => notice.desc)).toEqual([text]);
    expect(await outboxTexts(server, 914_002)).toEqual([text]);
    expectRefused(await receive(await customer(), push.code), 1040, PushMsg.codeInvalid);
    expectRefused(await cancel(a, push.code), 1040, PushMsg.alreadyReturned);
  });

  test("an overdue transfer shows as returned the next time its sender lists, not 待领取", async () => {
    const a = await customer(20);
    const push = await created(a, 20);
    await db().run(
      "UPDATE pushes SET create_time = create_time - ? WHERE code = ?",
      PUSH_RETURN_MS,
      push.code,
    );
    expect((await list(a)).pushList.map((item) => item.state)).toEqual(["returned"]);
    expect(await trafficOf(a.user.id)).toBe(20 * GB);
  });
});

test("balances.traffic equals the sum of its traffic records for every account", async () => {
  const off = await db().all<{ id: string }>(`SELECT u.id FROM users u JOIN balances b ON b.user_id = u.id
       WHERE b.traffic <> (SELECT COALESCE(SUM(traffic_change), 0) FROM traffic_records r WHERE r.user_id = u.id)`);
  expect(off).toEqual([]);
  const moved = await db().get<{ spent: number; received: number; fees: number }>(`SELECT
         (SELECT -SUM(traffic_change) FROM traffic_records WHERE type = 'push_spend') AS spent,
         (SELECT SUM(traffic_change) FROM traffic_records WHERE type = 'push_receive') AS received,
         (SELECT SUM(push_number - receive_number) FROM pushes WHERE state = 'received') AS fees`);
  // What left senders and did not come back = what receivers got + the fees; nothing waiting is lost.
  const waiting =
    (
      await db().get<{ n: number }>(
        "SELECT COALESCE(SUM(push_number), 0) AS n FROM pushes WHERE state = 'created'",
      )
    )?.n ?? 0;
  expect(moved?.spent).toBe((moved?.received ?? 0) + (moved?.fees ?? 0) + waiting);
});
