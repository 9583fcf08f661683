/**
 * The catalogue through the API as the back office and the shop use it: combos and permissions
 * created, edited and deleted by an admin, refused bad input, and the channel-code price filter.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startShopServer } from "../../../tests/commerce.ts";
import { ApiClient, loggedInClient, type TestServer, uniqueEmail } from "../../../tests/harness.ts";
import { DEFAULT_DAILY_LIMIT, GB } from "../../lib/traffic.ts";
import type { Order } from "../order/schema.ts";
import type { PermissionItem } from "../permission/schema.ts";
import type { Settings } from "../settings/schema.ts";
import { transformPassword } from "../user/password.ts";
import type { UserInfo } from "../user/schema.ts";
import type { Combo } from "./schema.ts";

let server: TestServer;
let admin: ApiClient;
let adminId: string;

beforeAll(async () => {
  server = await startShopServer();
  const signedIn = await loggedInClient(server, { role: "admin" });
  admin = signedIn.client;
  adminId = signedIn.user.id;
});
afterAll(async () => {
  await server?.close();
});

let serial = 0;
function comboPayload(overrides: Record<string, unknown> = {}) {
  serial += 1;
  return { name: `流量包 ${serial}`, price: 15, traffic: 100 * GB, vipDuration: 0, ...overrides };
}

async function createCombo(overrides: Record<string, unknown> = {}): Promise<Combo> {
  const answer = await admin.call<Combo>("/api/admin/combo/update_combo", comboPayload(overrides));
  expect(answer.msg).toBe("ok");
  return answer.data;
}

async function createPermission(name: string, desc = ""): Promise<PermissionItem> {
  const answer = await admin.call<PermissionItem>("/api/admin/permissions/update", { name, desc });
  expect(answer.msg).toBe("ok");
  return answer.data;
}

async function shopList(client: ApiClient = new ApiClient(server.url)): Promise<Combo[]> {
  const answer = await client.call<Combo[]>("/api/shop/list");
  expect(answer.code).toBe(0);
  return answer.data;
}

async function permissionList(): Promise<PermissionItem[]> {
  const answer = await admin.call<PermissionItem[]>("/api/admin/permissions/list");
  expect(answer.code).toBe(0);
  return answer.data;
}

describe("combos", () => {
  test("an admin creates, edits and deletes a combo, and the shop follows", async () => {
    const created = await admin.call<Combo>("/api/admin/combo/update_combo", {
      name: "100G 流量包",
      price: 15.5,
      traffic: 100 * GB,
      vipDuration: 0,
      additionPersend: 20,
      deviceNum: 3,
      speed: "150Mbps",
      orderID: 2,
      permissionsDesc: "无",
    });
    expect(created.code).toBe(0);
    const combo = created.data;
    expect(combo._id).toMatch(/^[0-9a-f]{24}$/);
    expect(combo).toMatchObject({
      name: "100G 流量包",
      price: 15.5,
      traffic: 100 * GB,
      vipDuration: 0,
      additionPersend: 20,
      deviceNum: 3,
      speed: "150Mbps",
      orderID: 2,
      permissionsGain: [],
      permissionDuration: 0,
      permissionsDesc: "无",
    });
    expect(await shopList()).toContainEqual(combo);

    const edited = await admin.call<Combo>("/api/admin/combo/update_combo", {
      ...combo,
      name: "200G 流量包",
      price: 25,
      traffic: 200 * GB,
    });
    expect(edited.code).toBe(0);
    expect(edited.data).toMatchObject({ _id: combo._id, name: "200G 流量包", price: 25, traffic: 200 * GB });
    const listed = (await shopList()).filter((c) => c._id === combo._id);
    expect(listed).toEqual([edited.data]);

    expect((await admin.call("/api/admin/combo/delete_combo", { id: combo._id })).code).toBe(0);
    expect((await shopList()).map((c) => c._id)).not.toContain(combo._id);

    const again = await admin.call("/api/admin/combo/delete_combo", { id: combo._id });
    expect(again.code).toBe(1004);
    expect(again.msg).toBe("商品不存在");
    const ghostEdit = await admin.call("/api/admin/combo/update_combo", { ...combo, name: "幽灵" });
    expect(ghostEdit.code).toBe(1004);
  });

  test("a time pack keeps its daily quota; without one it shows the 50 GB default", async () => {
    const quota = await createCombo({ vipDuration: 30, traffic: 0, limit: 20 * GB });
    expect(quota).toMatchObject({ vipDuration: 30, limit: 20 * GB });
    const plain = await createCombo({ vipDuration: 30, traffic: 0 });
    expect(plain.limit).toBe(DEFAULT_DAILY_LIMIT);
    expect(DEFAULT_DAILY_LIMIT).toBe(50 * GB);
  });

  test("bad input gets 1000 with a message saying what is wrong, and saves nothing", async () => {
    const before = await shopList();
    const cases: [Record<string, unknown>, string][] = [
      [{ price: -1 }, "金额不能为负"],
      [{ price: 9.999 }, "金额最多两位小数"],
      [{ price: "15" }, "price"],
      [{ name: "   " }, "名称不能为空"],
      [{ traffic: 1.5 }, "traffic"],
      [{ traffic: -GB }, "traffic"],
      [{ vipDuration: -1 }, "vipDuration"],
      [{ permissionsGain: ["0123456789abcdef01234567"] }, "权限不存在: 0123456789abcdef01234567"],
      [{ permissionsGain: ["netflix"] }, "id 格式错误"],
    ];
    for (const [overrides, message] of cases) {
      const answer = await admin.call("/api/admin/combo/update_combo", comboPayload(overrides));
      expect({ overrides, code: answer.code }).toEqual({ overrides, code: 1000 });
      expect(answer.msg).toContain(message);
    }
    expect(await shopList()).toEqual(before);
  });
});

describe("permissions", () => {
  test("an admin creates, renames, lists and deletes a permission", async () => {
    const netflix = await createPermission("netflix", "奈飞解锁");
    expect(netflix).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: "netflix",
      desc: "奈飞解锁",
      useTimes: 0,
    });
    expect(await permissionList()).toContainEqual(netflix);

    const clash = await admin.call("/api/admin/permissions/update", { name: "netflix", desc: "重复" });
    expect(clash.code).toBe(1000);
    expect(clash.msg).toBe("权限名已存在: netflix");
    const blank = await admin.call("/api/admin/permissions/update", { name: " ", desc: "" });
    expect(blank.code).toBe(1000);
    expect(blank.msg).toContain("名称不能为空");

    const renamed = await admin.call<PermissionItem>("/api/admin/permissions/update", {
      _id: netflix._id,
      name: "netflix_hk",
      desc: "奈飞香港",
    });
    expect(renamed.data).toEqual({ ...netflix, name: "netflix_hk", desc: "奈飞香港" });
    expect((await permissionList()).filter((p) => p._id === netflix._id)).toEqual([renamed.data]);

    expect((await admin.call("/api/admin/permissions/delete", { id: netflix._id })).code).toBe(0);
    expect((await permissionList()).map((p) => p._id)).not.toContain(netflix._id);
    expect((await admin.call("/api/admin/permissions/delete", { id: netflix._id })).code).toBe(1004);
  });

  test("a combo grants permissions by id; one still granted cannot be deleted", async () => {
    const gpt = await createPermission("chatgpt", "ChatGPT 线路");
    const combo = await createCombo({
      name: "GPT 套餐",
      permissionsGain: [gpt._id, gpt._id],
      permissionDuration: 360,
    });
    expect(combo.permissionsGain).toEqual([gpt._id]);
    expect(combo.permissionDuration).toBe(360);

    const refused = await admin.call("/api/admin/permissions/delete", { id: gpt._id });
    expect(refused.code).toBe(1000);
    expect(refused.msg).toBe("仍有商品授予该权限: GPT 套餐");
    expect((await permissionList()).map((p) => p._id)).toContain(gpt._id);

    // Once no combo grants it, it can go.
    await admin.call("/api/admin/combo/update_combo", { ...combo, permissionsGain: [] });
    expect((await admin.call("/api/admin/permissions/delete", { id: gpt._id })).code).toBe(0);
    expect((await permissionList()).map((p) => p._id)).not.toContain(gpt._id);
  });
});

describe("channel-code price filter", () => {
  const CODE = "vip888";

  async function setFilter(code: string, min: number) {
    const answer = await admin.call<Settings>("/api/admin/config/set_config", {
      channel_price_filter_code: code,
      channel_price_filter_min: min,
    });
    expect(answer.code).toBe(0);
    expect(answer.data).toMatchObject({ channel_price_filter_code: code, channel_price_filter_min: min });
  }

  /** Signs up through the API the way the SPA does, carrying the channel_code cookie the `?c=` link set. */
  async function signupWithCode(code: string): Promise<ApiClient> {
    const client = new ApiClient(server.url);
    client.cookies.set("channel_code", code);
    const answer = await client.call<UserInfo>("/api/user/signup", {
      email: uniqueEmail("channel"),
      password: transformPassword("correct-horse-1"),
    });
    expect(answer.code).toBe(0);
    return client;
  }

  test("users who came with the code see and can buy only combos priced above the minimum", async () => {
    const cheap = await createCombo({ price: 5 });
    const atMin = await createCombo({ price: 20 });
    const above = await createCombo({ price: 20.01 });
    const ours = (combos: Combo[]) =>
      combos.map((c) => c._id).filter((id) => [cheap._id, atMin._id, above._id].includes(id));
    await setFilter(CODE, 20);
    try {
      const visitor = new ApiClient(server.url);
      visitor.cookies.set("channel_code", CODE);
      expect(ours(await shopList(visitor))).toEqual([above._id]);

      const stranger = new ApiClient(server.url);
      stranger.cookies.set("channel_code", "other");
      expect(ours(await shopList(stranger))).toEqual([cheap._id, atMin._id, above._id]);
      expect(ours(await shopList())).toEqual([cheap._id, atMin._id, above._id]);

      // A user's stored code decides, whatever cookie the browser still carries.
      const member = await signupWithCode(CODE);
      member.cookies.delete("channel_code");
      expect(ours(await shopList(member))).toEqual([above._id]);
      const hidden = await member.call("/api/shop/create_order", { combo_id: cheap._id });
      expect(hidden.code).toBe(1004);
      expect(hidden.msg).toBe("商品不存在");
      expect((await member.call("/api/shop/create_order", { combo_id: atMin._id })).code).toBe(1004);
      const bought = await member.call<Order>("/api/shop/create_order", { combo_id: above._id });
      expect(bought.code).toBe(0);
      expect(bought.data.order_money).toBe(20.01);

      const plain = (await loggedInClient(server)).client;
      plain.cookies.set("channel_code", CODE);
      expect(ours(await shopList(plain))).toEqual([cheap._id, atMin._id, above._id]);
      expect((await plain.call("/api/shop/create_order", { combo_id: cheap._id })).code).toBe(0);

      // With the code setting emptied the filter is off for everyone.
      await setFilter("", 20);
      expect(ours(await shopList(member))).toEqual([cheap._id, atMin._id, above._id]);
      expect((await member.call("/api/shop/create_order", { combo_id: cheap._id })).code).toBe(0);
    } finally {
      await setFilter("", 20);
    }
  });
});

test("the admin combo list shows every combo, whatever the admin's own channel code", async () => {
  const cheap = await admin.call<Combo>("/api/admin/combo/update_combo", {
    name: "管理员可见的便宜套餐",
    price: 1,
    traffic: GB,
    vipDuration: 0,
  });
  await admin.call("/api/admin/config/set_config", {
    channel_price_filter_code: "adm1n",
    channel_price_filter_min: 20,
  });
  await server.context.db.run("UPDATE users SET channel_code = 'adm1n' WHERE id = ?", adminId);
  try {
    const shop = await admin.call<Combo[]>("/api/shop/list");
    expect(shop.data.map((c) => c._id)).not.toContain(cheap.data._id);
    const all = await admin.call<Combo[]>("/api/admin/combo/list");
    expect(all.code).toBe(0);
    expect(all.data.map((c) => c._id)).toContain(cheap.data._id);
  } finally {
    await admin.call("/api/admin/config/set_config", { channel_price_filter_code: "" });
  }
});
