/**
 * Role checks of the commerce back office (issue #3): every /api/admin/* call added there refuses
 * visitors (1002) and normal, channel and yunying users (1003) without changing anything, and
 * works for admins — by account type or by the admin_id setting.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GB } from "../src/lib/traffic.ts";
import type { Combo } from "../src/modules/combo/schema.ts";
import type { Order, OrderDetail, Trade } from "../src/modules/order/schema.ts";
import type { PermissionItem } from "../src/modules/permission/schema.ts";
import type { Settings } from "../src/modules/settings/schema.ts";
import { startShopServer } from "./commerce.ts";
import { ApiClient, loggedInClient, startWithAdmin, type TestServer } from "./harness.ts";

let server: TestServer;
let admin: ApiClient;
let buyer: ApiClient;

beforeAll(async () => {
  ({ server, admin } = await startWithAdmin(startShopServer));
  buyer = (await loggedInClient(server)).client;
});
afterAll(async () => {
  await server?.close();
});

interface Fixtures {
  combo: Combo;
  permission: PermissionItem;
  order: Order;
}

let made = 0;
/** A combo granting a permission, and a normal user's order of it. */
async function makeFixtures(): Promise<Fixtures> {
  made += 1;
  const permission = (
    await admin.call<PermissionItem>("/api/admin/permissions/update", { name: `perm-${made}`, desc: "线路" })
  ).data;
  const combo = (
    await admin.call<Combo>("/api/admin/combo/update_combo", {
      name: `商品 ${made}`,
      price: 10,
      traffic: 10 * GB,
      vipDuration: 0,
    })
  ).data;
  const order = (await buyer.call<Order>("/api/shop/create_order", { combo_id: combo._id })).data;
  expect([permission._id, combo._id, order._id].every((id) => /^[0-9a-f]{24}$/.test(id))).toBe(true);
  return { combo, permission, order };
}

const INTRUDER_COMBO = "越权商品";
const INTRUDER_PERMISSION = "越权权限";
const INTRUDER_NOTIFY = "https://intruder.example.com";

/** Every back-office call of the issue with a valid payload; deletes last. */
function adminCalls(f: Fixtures): [path: string, payload: unknown][] {
  return [
    ["/api/admin/permissions/list", {}],
    ["/api/admin/combo/list", {}],
    ["/api/admin/trades/tradelist", { requestNumber: 100, filterStr: "" }],
    ["/api/admin/trades/get_order_for_trade", { order_id: f.order._id }],
    ["/api/admin/config/get", {}],
    ["/api/admin/config/pay_status", {}],
    ["/api/admin/config/set_config", { notify_url: INTRUDER_NOTIFY }],
    ["/api/admin/permissions/update", { name: INTRUDER_PERMISSION, desc: "" }],
    ["/api/admin/combo/update_combo", { name: INTRUDER_COMBO, price: 1, traffic: GB, vipDuration: 0 }],
    ["/api/admin/combo/update_combo", { ...f.combo, name: INTRUDER_COMBO }],
    ["/api/admin/combo/delete_combo", { id: f.combo._id }],
    ["/api/admin/permissions/delete", { id: f.permission._id }],
  ];
}

/** What an admin sees of the catalogue, the permissions and the settings. */
async function snapshot() {
  const combos = (await admin.call<Combo[]>("/api/shop/list")).data;
  const permissions = (await admin.call<PermissionItem[]>("/api/admin/permissions/list")).data;
  const settings = (await admin.call<Settings>("/api/admin/config/get")).data;
  return { combos, permissions, settings };
}

describe("refused", () => {
  const refusedRoles: [label: string, client: () => Promise<ApiClient>, code: number, msg: string][] = [
    ["a visitor", async () => new ApiClient(server.url), 1002, "登录过期，请登录"],
    [
      "a normal user",
      async () => (await loggedInClient(server, { role: "normal" })).client,
      1003,
      "没有权限",
    ],
    [
      "a channel user",
      async () => (await loggedInClient(server, { role: "channel" })).client,
      1003,
      "没有权限",
    ],
    [
      "a yunying user",
      async () => (await loggedInClient(server, { role: "yunying" })).client,
      1003,
      "没有权限",
    ],
    [
      "a user named in yunying_list",
      async () => {
        const { client, user } = await loggedInClient(server);
        const listed = await admin.call("/api/admin/config/set_config", { yunying_list: [user.id] });
        expect(listed.code).toBe(0);
        return client;
      },
      1003,
      "没有权限",
    ],
  ];

  for (const [label, makeClient, code, msg] of refusedRoles) {
    test(`${label} gets ${code} from every call and changes nothing`, async () => {
      const fixtures = await makeFixtures();
      const client = await makeClient();
      const before = await snapshot();
      for (const [path, payload] of adminCalls(fixtures)) {
        const answer = await client.call(path, payload);
        expect({ path, answer }).toEqual({ path, answer: { code, data: null, msg } });
      }
      expect(await snapshot()).toEqual(before);
      expect(before.combos.map((c) => c.name)).not.toContain(INTRUDER_COMBO);
      expect(before.permissions.map((p) => p.name)).not.toContain(INTRUDER_PERMISSION);
      expect(before.settings.notify_url).not.toBe(INTRUDER_NOTIFY);
    });
  }
});

describe("allowed", () => {
  const adminRoles: [label: string, client: () => Promise<ApiClient>][] = [
    ["an admin", async () => admin],
    [
      "a user named in admin_id",
      async () => {
        const { client, user } = await loggedInClient(server);
        expect((await admin.call("/api/admin/config/set_config", { admin_id: [user.id] })).code).toBe(0);
        return client;
      },
    ],
  ];

  for (const [label, makeClient] of adminRoles) {
    test(`${label} can make every call`, async () => {
      const fixtures = await makeFixtures();
      const client = await makeClient();
      const answers = new Map<string, { code: number; data: unknown }>();
      for (const [path, payload] of adminCalls(fixtures)) {
        const answer = await client.call(path, payload);
        expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: "ok" });
        answers.set(path, answer);
      }
      const trades = answers.get("/api/admin/trades/tradelist")?.data as Trade[];
      expect(trades.map((t) => t.order_id)).toContain(fixtures.order._id);
      const detail = answers.get("/api/admin/trades/get_order_for_trade")?.data as OrderDetail;
      expect(detail).toMatchObject({ desc: fixtures.combo.name, order_money: 10, status: "topay" });

      const after = await snapshot();
      expect(after.settings.notify_url).toBe(INTRUDER_NOTIFY);
      expect(after.permissions.map((p) => p.name)).toContain(INTRUDER_PERMISSION);
      expect(after.permissions.map((p) => p._id)).not.toContain(fixtures.permission._id);
      expect(after.combos.map((c) => c._id)).not.toContain(fixtures.combo._id);
      expect(after.combos.map((c) => c.name)).toContain(INTRUDER_COMBO);

      // Leave the next test a clean slate.
      await admin.call("/api/admin/config/set_config", { notify_url: "" });
      const intruders = after.permissions.filter((p) => p.name === INTRUDER_PERMISSION);
      for (const c of after.combos.filter((c) => c.name === INTRUDER_COMBO)) {
        expect((await admin.call("/api/admin/combo/delete_combo", { id: c._id })).code).toBe(0);
      }
      for (const p of intruders) {
        expect((await admin.call("/api/admin/permissions/delete", { id: p._id })).code).toBe(0);
      }
    });
  }
});
