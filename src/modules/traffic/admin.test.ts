/**
 * `/api/admin/traffic_spend/traffic_records` (issue 16 §3): every user's traffic records of the last
 * day_num business days, newest first, with uid and email, filtered by type.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, loggedInClient, startWithAdmin, type TestServer } from "../../../tests/harness.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { changeTraffic } from "../ledger/service.ts";
import type { Role } from "../user/schema.ts";
import type { AllTrafficRecords } from "./admin-schema.ts";
import type { TrafficRecordType } from "./schema.ts";

let server: TestServer;
let admin: ApiClient;
const PATH = "/api/admin/traffic_spend/traffic_records";

beforeAll(async () => ({ server, admin } = await startWithAdmin()));
afterAll(() => server?.close());

async function record(userId: string, type: TrafficRecordType, bytes: number, now: number) {
  const db = server.context.db;
  await tx(
    db,
    async () =>
      await changeTraffic(db, { userId, type, desc: type, traffic: bytes, now, timeZone: "Asia/Shanghai" }),
  );
}

async function list(payload: unknown): Promise<AllTrafficRecords> {
  const answer = await admin.call<AllTrafficRecords>(PATH, payload);
  if (answer.code !== 0) throw new Error(`${answer.code} ${answer.msg}`);
  return answer.data;
}

describe("all traffic records", () => {
  test("refuses visitors (1002) and normal, channel and yunying users (1003)", async () => {
    expect((await admin.call(PATH, {})).code).toBe(0);
    expect((await new ApiClient(server.url).call(PATH, {})).code).toBe(1002);
    for (const role of ["normal", "channel", "yunying"] as Role[]) {
      const { client } = await loggedInClient(server, { role });
      expect({ role, code: (await client.call(PATH, {})).code }).toEqual({ role, code: 1003 });
    }
  });

  test("every user's records of the last 2 business days by default, newest first, filtered by type", async () => {
    const a = await loggedInClient(server);
    const b = await loggedInClient(server);
    const now = Date.now();
    await record(a.user.id, "buy", 10 * GB, now - 5 * DAY_MS); // outside 2 days and 4 days
    await record(a.user.id, "buy", 4 * GB, now - 2 * DAY_MS); // inside 4 days only
    await record(a.user.id, "coupon", 2 * GB, now - 60_000);
    await record(b.user.id, "buy", 3 * GB, now);

    const recent = await list({});
    expect(recent.truncated).toBe(false);
    expect(
      recent.records.map((r) => [
        r.email,
        r.uid,
        r.type,
        r.trafficChange / GB,
        r.allTraffic / GB,
        r.allSpend,
      ]),
    ).toEqual([
      [b.email, b.user.id, "buy", 3, 3, 0],
      [a.email, a.user.id, "coupon", 2, 16, 0],
    ]);
    expect(recent.records[0]?.day).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    const buys = await list({ type: "buy" });
    expect(buys.records.map((r) => r.email)).toEqual([b.email]);
    const fourDays = await list({ type: "buy", day_num: 4 });
    expect(fourDays.records.map((r) => r.trafficChange / GB)).toEqual([3, 4]);
    expect((await list({ type: "all", day_num: 7 })).records.length).toBe(4);
  });

  test("bad type or day_num is 1000", async () => {
    for (const payload of [
      { type: "nope" },
      { day_num: 0 },
      { day_num: 91 },
      { day_num: 1.5 },
      { day_num: "2" },
    ]) {
      expect({ payload, code: (await admin.call(PATH, payload)).code }).toEqual({ payload, code: 1000 });
    }
  });
});
