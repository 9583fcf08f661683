/**
 * Issue 29, the HWID contract through the real subscription route over HTTP, for every format in
 * FORMATS (one line each): limit off, under, at, over, missing id, removal and reset; the limit
 * from packages and the override; the bounds (64 devices, long ids, new ids per hour); the
 * customer's and the back office's calls, each only on what it may touch.
 * The server counts rate limits as deployed (scale 1): the hourly bound on new ids is one of them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loggedInClient, setUserColumns, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { saveNode } from "../../../tests/nodes.ts";
import { GB } from "../../lib/traffic.ts";
import { settleWithoutGateway } from "../../payments/credit.ts";
import { Code } from "../../rpc/codes.ts";
import { type Client, subscriptionUrl } from "../../subscription/clients.ts";
import { comboInput } from "../combo/schema.ts";
import { saveCombo } from "../combo/service.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import { createOrder } from "../order/service.ts";
import type { UserRow } from "../user/row.ts";
import { findUserById } from "../user/service.ts";
import { type DeviceList, DeviceMsg, MAX_DEVICES, NEW_DEVICES_PER_HOUR } from "./schema.ts";
import { setDeviceLimit } from "./service.ts";

/** The formats every branch is checked in: adding a format is one line. */
const FORMATS: Client[] = ["clash", "v2ray", "json"];

const LINE_NAME = "设备测试线路";
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ rateLimitScale: 1 });
  const agent = await saveNode(server, { name: "香港", ip: "203.0.113.9", host: "hk.example.com" });
  await saveLine(
    server.context,
    lineInput.parse({ name: LINE_NAME, agentID: agent._id, protocol: "vmesh_tcp", bridge: "none" }),
  );
});
afterAll(async () => {
  await server?.close();
});

const ctx = () => server.context;

async function customer() {
  const made = await loggedInClient(server);
  await setUserColumns(ctx().db, made.user.id, { traffic: 10 * GB });
  return made;
}

const current = async (user: UserRow) => (await findUserById(ctx(), user.id)) as UserRow;

/** The body as a person reads it: base64 lists decoded, vmess JSON decoded, URI names unescaped. */
function readable(body: string): string {
  const trimmed = body.trim();
  const text = /^[A-Za-z0-9+/=\r\n]+$/.test(trimmed) ? Buffer.from(trimmed, "base64").toString("utf8") : body;
  return text
    .split("\n")
    .map((line) => {
      if (line.startsWith("vmess://")) return Buffer.from(line.slice(8), "base64").toString("utf8");
      try {
        return decodeURIComponent(line);
      } catch {
        return line;
      }
    })
    .join("\n");
}

interface Fetched {
  status: number;
  headers: Headers;
  text: string;
}

async function fetchAs(
  user: UserRow,
  client: Client,
  device: Record<string, string> | null,
): Promise<Fetched> {
  const url = subscriptionUrl(server.url, client, { _id: user.id, userkey: user.userkey });
  const headers: Record<string, string> = { "user-agent": "Happ/3.2.1", ...(device ?? {}) };
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, text: readable(await response.text()) };
}

const device = (hwid: string) => ({
  "x-hwid": hwid,
  "x-device-os": "iOS",
  "x-ver-os": "18.2",
  "x-device-model": "iPhone15,2",
});

function expectFull(answer: Fetched, limit: number | null) {
  expect(answer.status).toBe(200);
  expect(answer.text).toContain(LINE_NAME);
  expect(answer.headers.get("x-hwid-active")).toBe(limit === null ? null : "true");
  expect(answer.headers.get("x-hwid-limit")).toBe(limit === null ? null : String(limit));
  expect(answer.headers.get("x-hwid-max-devices-reached")).toBeNull();
  expect(answer.headers.get("x-hwid-not-supported")).toBeNull();
}

function expectNotice(answer: Fetched, kind: "max" | "missing") {
  expect(answer.status).toBe(200);
  expect(answer.text).not.toContain(LINE_NAME);
  expect(answer.text).toContain(kind === "max" ? DeviceMsg.maxReached : DeviceMsg.notSupported);
  expect(answer.headers.get(kind === "max" ? "x-hwid-max-devices-reached" : "x-hwid-not-supported")).toBe(
    "true",
  );
  expect(answer.headers.get("x-hwid-active")).toBeNull();
  // Nothing of the account: no usage, no line credentials.
  expect(answer.headers.get("subscription-userinfo")).toBeNull();
}

async function ownDevices(client: Awaited<ReturnType<typeof customer>>["client"]): Promise<DeviceList> {
  const answer = await client.call<DeviceList>("/api/user/devices", {});
  expect(answer.code).toBe(0);
  return answer.data;
}

describe.each(FORMATS)("the HWID contract (%s)", (format) => {
  test("limit off: answered as today, and a device that sends an id is recorded", async () => {
    const { user, client } = await customer();
    expectFull(await fetchAs(user, format, null), null);
    expectFull(await fetchAs(user, format, device("off-1")), null);
    expectFull(await fetchAs(user, format, device("off-1")), null);
    const list = await ownDevices(client);
    expect(list.limit).toBe(0);
    expect(list.devices.map((d) => [d.hwid, d.platform, d.osVersion, d.model, d.userAgent])).toEqual([
      ["off-1", "iOS", "18.2", "iPhone15,2", "Happ/3.2.1"],
    ]);
    expect(list.devices[0]?.lastIp).toBe("127.0.*.*");
  });

  test("limit on: under and at the limit answered with the headers; over it the notice; a known device still in", async () => {
    const { user } = await customer();
    await setDeviceLimit(ctx(), user.id, 2);
    expectFull(await fetchAs(user, format, device("a")), 2);
    expectFull(await fetchAs(user, format, device("b")), 2);
    expectNotice(await fetchAs(user, format, device("c")), "max");
    expectFull(await fetchAs(user, format, device("a")), 2);
    // The refused device was not recorded: it is refused again.
    expectNotice(await fetchAs(user, format, device("c")), "max");
  });

  test("limit on and no device id (or an unusable one): the notice that names the clients", async () => {
    const { user } = await customer();
    await setDeviceLimit(ctx(), user.id, 3);
    expectNotice(await fetchAs(user, format, null), "missing");
    expectNotice(await fetchAs(user, format, device("x".repeat(129))), "missing");
    expect(DeviceMsg.notSupported).toContain("Happ");
  });

  test("removal on 我的账户 frees a place: the next new device gets in", async () => {
    const { user, client } = await customer();
    await setDeviceLimit(ctx(), user.id, 1);
    expectFull(await fetchAs(user, format, device("old-phone")), 1);
    expectNotice(await fetchAs(user, format, device("new-phone")), "max");
    const removed = await client.call("/api/user/remove_device", { hwid: "old-phone" });
    expect(removed.code).toBe(0);
    expectFull(await fetchAs(user, format, device("new-phone")), 1);
    expect((await ownDevices(client)).devices.map((d) => d.hwid)).toEqual(["new-phone"]);
  });

  test("a subscription reset removes every device: the new link starts with none", async () => {
    const { user, client } = await customer();
    await setDeviceLimit(ctx(), user.id, 1);
    expectFull(await fetchAs(user, format, device("before-reset")), 1);
    const reset = await client.call("/api/user/reset_userkey", {});
    expect(reset.code).toBe(0);
    expect((await ownDevices(client)).devices).toEqual([]);
    const renewed = await current(user);
    expectFull(await fetchAs(renewed, format, device("after-reset")), 1);
    // The old link is gone altogether.
    expect((await fetchAs(user, format, device("before-reset"))).status).toBe(404);
  });
});

describe("the limit", () => {
  async function combo(deviceNum: number, kind: "time" | "traffic") {
    return await saveCombo(
      ctx(),
      comboInput.parse({
        name: `设备 ${deviceNum} ${kind} ${Math.random()}`,
        price: 0,
        traffic: kind === "traffic" ? GB : 0,
        vipDuration: kind === "time" ? 30 : 0,
        deviceNum,
      }),
    );
  }

  async function buy(user: UserRow, comboId: string) {
    const order = await createOrder(ctx(), await current(user), comboId);
    await settleWithoutGateway(ctx(), order._id, "manual", "test");
  }

  test("the largest deviceNum among the packages held; an expired one no longer counts; the override wins", async () => {
    const { user, client } = await customer();
    await setUserColumns(ctx().db, user.id, { traffic: 0 });
    await buy(user, (await combo(2, "time"))._id);
    await buy(user, (await combo(3, "traffic"))._id);
    expect((await ownDevices(client)).limit).toBe(3);
    // The traffic package is used up: only the running time package counts.
    await setUserColumns(ctx().db, user.id, { traffic: 0 });
    expect((await ownDevices(client)).fromPackages).toBe(2);
    // The time package ends too: nothing held, no limit.
    await setUserColumns(ctx().db, user.id, { vip_expire_time: Date.now() - 1000 });
    expect((await ownDevices(client)).limit).toBe(0);
    await setDeviceLimit(ctx(), user.id, 1);
    expect(await ownDevices(client)).toMatchObject({ limit: 1, override: 1, fromPackages: 0 });
    await setDeviceLimit(ctx(), user.id, null);
    expect(await ownDevices(client)).toMatchObject({ limit: 0, override: null });
  });

  test("a package's device count is enforced on the subscription", async () => {
    const { user } = await customer();
    await buy(user, (await combo(1, "time"))._id);
    expectFull(await fetchAs(user, "clash", device("pkg-1")), 1);
    expectNotice(await fetchAs(user, "clash", device("pkg-2")), "max");
  });
});

describe("bounds", () => {
  test("long and unprintable ids are not recorded; long headers are cut", async () => {
    const { user, client } = await customer();
    await fetchAs(user, "v2ray", device("y".repeat(129)));
    await fetchAs(user, "v2ray", { "x-hwid": "has space" });
    await fetchAs(user, "v2ray", { ...device("ok-id"), "x-device-model": "M".repeat(500) });
    const list = await ownDevices(client);
    expect(list.devices.map((d) => d.hwid)).toEqual(["ok-id"]);
    expect(list.devices[0]?.model.length).toBe(64);
  });

  test(`a flood of random ids records at most ${NEW_DEVICES_PER_HOUR} an hour; with a limit they are refused`, async () => {
    const { user, client } = await customer();
    for (let i = 0; i < NEW_DEVICES_PER_HOUR + 5; i += 1) {
      expectFull(await fetchAs(user, "v2ray", device(`flood-${i}`)), null);
    }
    expect((await ownDevices(client)).devices.length).toBe(NEW_DEVICES_PER_HOUR);
    await setDeviceLimit(ctx(), user.id, MAX_DEVICES);
    expectNotice(await fetchAs(user, "v2ray", device("one-more")), "max");
    expectFull(await fetchAs(user, "v2ray", device("flood-0")), MAX_DEVICES);
  });

  test(`at most ${MAX_DEVICES} devices are kept per account: the next is not recorded, or refused under a limit`, async () => {
    const { user, client } = await customer();
    const now = Date.now();
    for (let i = 0; i < MAX_DEVICES; i += 1) {
      await ctx().db.run(
        "INSERT INTO devices (user_id, hwid, first_seen, last_seen) VALUES (?, ?, ?, ?)",
        user.id,
        `kept-${i}`,
        now,
        now,
      );
    }
    expectFull(await fetchAs(user, "clash", device("sixty-fifth")), null);
    expect((await ownDevices(client)).devices.length).toBe(MAX_DEVICES);
    await setDeviceLimit(ctx(), user.id, MAX_DEVICES);
    expectNotice(await fetchAs(user, "clash", device("sixty-fifth")), "max");
  });

  test("a fetch storm from a known device writes once, not per fetch", async () => {
    const { user, client } = await customer();
    await fetchAs(user, "clash", device("storm"));
    const first = (await ownDevices(client)).devices[0]?.lastSeen;
    for (let i = 0; i < 5; i += 1)
      await fetchAs(user, "clash", { ...device("storm"), "x-ver-os": `19.${i}` });
    const after = (await ownDevices(client)).devices[0];
    expect(after?.lastSeen).toBe(first as number);
    expect(after?.osVersion).toBe("18.2");
  });
});

describe("who may see and remove", () => {
  test("a customer sees and removes only their own devices", async () => {
    const owner = await customer();
    const other = await customer();
    await fetchAs(owner.user, "v2ray", device("owners-phone"));
    expect((await ownDevices(other.client)).devices).toEqual([]);
    const refused = await other.client.call("/api/user/remove_device", { hwid: "owners-phone" });
    expect(refused.code).not.toBe(0);
    expect((await ownDevices(owner.client)).devices.map((d) => d.hwid)).toEqual(["owners-phone"]);
    const admin = await other.client.call("/api/admin/users/devices", { uid: owner.user.id });
    expect(admin.code).not.toBe(0);
  });

  test("用户管理: the full list, the limit, remove-all", async () => {
    const { client: admin } = await loggedInClient(server, { role: "admin" });
    const { user } = await customer();
    await fetchAs(user, "v2ray", device("d1"));
    await fetchAs(user, "v2ray", device("d2"));
    const listed = await admin.call<DeviceList>("/api/admin/users/devices", { uid: user.id });
    expect(listed.data.devices.map((d) => d.lastIp)).toEqual(["127.0.0.1", "127.0.0.1"]);
    const limited = await admin.call<DeviceList>("/api/admin/users/set_device_limit", {
      uid: user.id,
      limit: 5,
    });
    expect(limited.data).toMatchObject({ limit: 5, override: 5 });
    const wrong = await admin.call("/api/admin/users/set_device_limit", { uid: user.id, limit: 65 });
    expect(wrong.code).toBe(Code.badInput);
    expect(wrong.msg).toContain(DeviceMsg.limitRange);
    const cleared = await admin.call<DeviceList>("/api/admin/users/remove_devices", { uid: user.id });
    expect(cleared.data.devices).toEqual([]);
    expectFull(await fetchAs(user, "v2ray", device("d3")), 5);
  });
});
