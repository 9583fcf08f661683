/**
 * The audit trail (issue 30, part 2) through the real API: every audited admin and yunying change,
 * made once, writes exactly one audit_log row naming the account, its IP, the action, the target
 * and the diff (secrets masked: smtp_password and epay_key never appear in any row nor in the
 * list's raw answer); read-only calls and refused or rolled-back changes write none; the CLI
 * writes rows as cli@<host>; `ferry audit --json` answers newest first; yunying may not read the
 * trail; rows cannot be edited or deleted.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { expectOneLineError, type FerryIn, ferry, startWithCli } from "../cli/test-helpers.ts";
import type { AuditPage } from "../src/modules/audit/schema.ts";
import type { Combo } from "../src/modules/combo/schema.ts";
import type { Coupon } from "../src/modules/coupon/schema.ts";
import type { Entry } from "../src/modules/entry/schema.ts";
import type { Ticket } from "../src/modules/feedback/schema.ts";
import type { AgentLine } from "../src/modules/line/schema.ts";
import type { Agent } from "../src/modules/node-record/schema.ts";
import { type AgentRow, findAgentRow } from "../src/modules/node-record/service.ts";
import type { PermissionItem } from "../src/modules/permission/schema.ts";
import type { Prize } from "../src/modules/prize/schema.ts";
import { SECRET_MASK } from "../src/modules/settings/schema.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import { startControlServer } from "../src/node-program/control.ts";
import { Code } from "../src/rpc/codes.ts";
import { fromBase64Json, toBase64Json } from "../src/rpc/envelope.ts";
import { type ApiClient, loggedInClient, type TestServer } from "./harness.ts";
import { serveAgentBinary, V2RAY_NODE } from "./nodes.ts";

const SMTP_SECRET = "smtp-pass-Zq81x";
const EPAY_SECRET = "epay-key-Wm42vLr9Kd7";
const WEBHOOK_SECRET = "whsec-Pq73nB2xLk";
const NEW_PASSWORD = "brand-new-pass-77";

interface StoredRow {
  id: number;
  actor: string;
  actor_id: string | null;
  ip: string;
  action: string;
  target: string;
  diff: string;
}
type Row = Omit<StoredRow, "diff"> & { diff: Record<string, { old?: unknown; new?: unknown }> };

let server: TestServer;
let cli: FerryIn;
let admin: ApiClient;
let adminEmail: string;
let adminId: string;
let yunying: ApiClient;
let yunyingEmail: string;
let customer: { client: ApiClient; email: string; id: string };
let seen = 0;

beforeAll(async () => {
  ({ server, cli } = await startWithCli());
  const a = await loggedInClient(server, { role: "admin" });
  ({ client: admin, email: adminEmail } = a);
  adminId = a.user.id;
  const y = await loggedInClient(server, { role: "yunying" });
  ({ client: yunying, email: yunyingEmail } = y);
  const c = await loggedInClient(server);
  customer = { client: c.client, email: c.email, id: c.user.id };
  await newRows();
});
afterAll(() => server?.close());

/** The rows written since the last look, oldest first. */
async function newRows(): Promise<Row[]> {
  const rows = await server.context.db.all<StoredRow>(
    "SELECT * FROM audit_log WHERE id > ? ORDER BY id",
    seen,
  );
  if (rows.length > 0) seen = Number(rows.at(-1)?.id);
  return rows.map((row) => ({ ...row, id: Number(row.id), diff: JSON.parse(row.diff) }));
}

async function ok<T>(client: ApiClient, path: string, payload: unknown = {}): Promise<T> {
  const answer = await client.call<T>(path, payload);
  expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: "ok" });
  return answer.data;
}

/** Exactly one new row, by `who` from 127.0.0.1, with this action and target; answers its diff. */
async function oneRow(
  action: string,
  target: string,
  who: "admin" | "yunying" = "admin",
): Promise<Row["diff"]> {
  const rows = await newRows();
  expect(rows.map((r) => [r.actor, r.ip, r.action, r.target])).toEqual([
    [who === "admin" ? adminEmail : yunyingEmail, "127.0.0.1", action, target],
  ]);
  return (rows[0] as Row).diff;
}

async function noRows() {
  expect(await newRows()).toEqual([]);
}

describe("every audited change writes one row", () => {
  test("settings: changed keys only, old and new, secrets masked; a resent mask is no change", async () => {
    await ok(admin, "/api/admin/config/set_config", { smtp_password: SMTP_SECRET, epay_key: EPAY_SECRET });
    expect(await oneRow("settings.update", "epay_key,smtp_password")).toEqual({
      smtp_password: { old: "", new: SECRET_MASK },
      epay_key: { old: "", new: SECRET_MASK },
    });
    const before = (await server.context.settings.all()).prizeBaseCost;
    await ok(admin, "/api/admin/config/set_config", {
      smtp_password: SECRET_MASK,
      epay_key: SECRET_MASK,
      prizeBaseCost: before + 2,
      gameSeat: (await server.context.settings.all()).gameSeat,
    });
    expect(await oneRow("settings.update", "prizeBaseCost")).toEqual({
      prizeBaseCost: { old: before, new: before + 2 },
    });
    // A new secret is a change, shown as the mask on both sides.
    await ok(admin, "/api/admin/config/set_config", { smtp_password: `${SMTP_SECRET}-2` });
    expect(await oneRow("settings.update", "smtp_password")).toEqual({
      smtp_password: { old: SECRET_MASK, new: SECRET_MASK },
    });
    // Saving the page unchanged writes nothing.
    await ok(admin, "/api/admin/config/set_config", await ok(admin, "/api/admin/config/get"));
    await noRows();
  });

  test("settings: a webhook's secret is masked inside the webhooks list", async () => {
    const webhook = {
      url: "https://hooks.example.com/ferry",
      secret: WEBHOOK_SECRET,
      events: ["order.paid"],
    };
    const saved = await ok<{ webhooks: { id: string }[] }>(admin, "/api/admin/config/set_config", {
      webhooks: [webhook],
    });
    const id = saved.webhooks[0]?.id;
    expect(await oneRow("settings.update", "webhooks")).toEqual({
      webhooks: { old: [], new: [{ id, url: webhook.url, secret: SECRET_MASK, events: webhook.events }] },
    });
  });

  test("combos: create, update (changed fields), delete", async () => {
    const combo = await ok<Combo>(admin, "/api/admin/combo/update_combo", {
      name: "审计套餐",
      price: 10,
      traffic: 1024,
      vipDuration: 0,
    });
    const created = await oneRow("combo.create", combo._id);
    expect(created.name).toEqual({ new: "审计套餐" });
    expect(created.price).toEqual({ new: 10 });
    expect(created._id).toBeUndefined();
    await ok(admin, "/api/admin/combo/update_combo", { ...combo, price: 12 });
    expect(await oneRow("combo.update", combo._id)).toEqual({ price: { old: 10, new: 12 } });
    await ok(admin, "/api/admin/combo/delete_combo", { id: combo._id });
    expect(await oneRow("combo.delete", combo._id)).toEqual({
      name: { old: "审计套餐" },
      price: { old: 12 },
    });
  });

  test("permissions: create, update, delete", async () => {
    const made = await ok<PermissionItem>(admin, "/api/admin/permissions/update", {
      name: "审计权限",
      desc: "a",
    });
    expect(await oneRow("permission.create", made._id)).toEqual({
      name: { new: "审计权限" },
      desc: { new: "a" },
    });
    await ok(admin, "/api/admin/permissions/update", { _id: made._id, name: "审计权限", desc: "b" });
    expect(await oneRow("permission.update", made._id)).toEqual({ desc: { old: "a", new: "b" } });
    await ok(admin, "/api/admin/permissions/delete", { id: made._id });
    expect(await oneRow("permission.delete", made._id)).toEqual({
      name: { old: "审计权限" },
      desc: { old: "b" },
    });
  });

  test("nodes, entries and lines, with reset_hot, clear_updatetimes, manual update and upgrade", async () => {
    const node = {
      ...V2RAY_NODE,
      name: "审计节点",
      country: { code: "HK" },
      ip: "203.0.113.9",
      ssh_password: "ssh-Secret-1",
    };
    const agent = await ok<Agent>(admin, "/api/admin/agents/update", node);
    const created = await oneRow("node.create", agent._id);
    expect(created.name).toEqual({ new: "审计节点" });
    expect(created.ssh_password).toEqual({ new: SECRET_MASK });
    await ok(admin, "/api/admin/agents/update", {
      ...node,
      _id: agent._id,
      name: "审计节点2",
      ssh_password: "ssh-Secret-2",
    });
    expect(await oneRow("node.update", agent._id)).toEqual({
      name: { old: "审计节点", new: "审计节点2" },
      ssh_password: { old: SECRET_MASK, new: SECRET_MASK },
    });

    const entry = await ok<Entry>(admin, "/api/admin/entrys/update", {
      name: "审计入口",
      ip: "198.51.100.9",
    });
    expect((await oneRow("entry.create", entry._id)).name).toEqual({ new: "审计入口" });
    await ok(admin, "/api/admin/entrys/update", { ...entry, ipList: entry.ipList, name: "审计入口2" });
    expect(await oneRow("entry.update", entry._id)).toEqual({ name: { old: "审计入口", new: "审计入口2" } });

    const lineForm = {
      name: "审计线路",
      agentID: agent._id,
      protocol: "vmesh_ws",
      bridge: "report",
      entryID: entry._id,
    };
    const line = await ok<AgentLine>(admin, "/api/admin/agent_line/update", lineForm);
    expect((await oneRow("line.create", line._id)).name).toEqual({ new: "审计线路" });
    await ok(admin, "/api/admin/agent_line/update", { ...lineForm, _id: line._id, scale: 2 });
    expect(await oneRow("line.update", line._id)).toEqual({ scale: { old: 1, new: 2 } });
    await server.context.db.run("UPDATE agent_lines SET hot = 5");
    await ok(admin, "/api/admin/agent_line/reset_hot");
    expect(await oneRow("line.reset_hot", "")).toEqual({ linesReset: { new: 1 } });

    await server.context.db.run("UPDATE agents SET update_config_times = 3");
    await ok(admin, "/api/admin/agents/clear_updatetimes");
    expect(await oneRow("node.clear_updatetimes", "")).toEqual({ nodesCleared: { new: 1 } });
    const { cmd } = await ok<{ cmd: string }>(admin, "/api/admin/agents/manual_update_agent", {
      id: agent._id,
    });
    const row = (await findAgentRow(server.context, agent._id)) as AgentRow;
    expect(cmd).toContain(row.api_token);
    const manual = await oneRow("node.manual_update", agent._id);
    expect(JSON.stringify(manual)).not.toContain(row.api_token);

    await upgradeOnce(agent);

    await ok(admin, "/api/admin/agent_line/delete_agent", { id: line._id });
    expect(await oneRow("line.delete", line._id)).toEqual({
      name: { old: "审计线路" },
      agentID: { old: agent._id },
    });
    await ok(admin, "/api/admin/entrys/delete", { id: entry._id });
    expect(await oneRow("entry.delete", entry._id)).toEqual({
      name: { old: "审计入口2" },
      ip: { old: "198.51.100.9" },
    });
    await ok(admin, "/api/admin/agents/delete", { id: agent._id });
    expect(await oneRow("node.delete", agent._id)).toMatchObject({
      name: { old: "审计节点2" },
      ip: { old: "127.0.0.1" },
    });
  });

  test("users: update, balance adjustment, password (never shown), channel, device limit and removal", async () => {
    await ok(admin, "/api/admin/users/update_user", { _id: customer.id, scale: 2.5 });
    expect(await oneRow("user.update", customer.email)).toEqual({ scale: { old: 1, new: 2.5 } });
    await ok(admin, "/api/admin/users/update_user", {
      _id: customer.id,
      adjust: { walletYuan: 600, reason: "补偿" },
    });
    expect(await oneRow("balance.adjust", customer.email)).toEqual({
      wallet_money: { old: 0, new: 600 },
      reason: { new: "补偿" },
    });
    await ok(admin, "/api/admin/users/update_channel", {
      email: customer.email,
      name: "审计渠道",
      code: "AUDCH1",
    });
    expect(await oneRow("channel.create", customer.email)).toMatchObject({
      name: { new: "审计渠道" },
      code: { new: "AUDCH1" },
    });
    await ok(admin, "/api/admin/users/update_channel", {
      email: customer.email,
      name: "审计渠道2",
      code: "AUDCH1",
    });
    expect(await oneRow("channel.update", customer.email)).toEqual({
      name: { old: "审计渠道", new: "审计渠道2" },
    });
    await ok(admin, "/api/admin/users/set_device_limit", { uid: customer.id, limit: 3 });
    expect(await oneRow("device.set_limit", customer.email)).toEqual({ deviceLimit: { old: null, new: 3 } });
    const addDevice = (hwid: string) =>
      server.context.db.run(
        "INSERT INTO devices (user_id, hwid, first_seen, last_seen) VALUES (?, ?, ?, ?)",
        customer.id,
        hwid,
        Date.now(),
        Date.now(),
      );
    await addDevice("hw-one");
    await addDevice("hw-two");
    await ok(admin, "/api/admin/users/remove_devices", { uid: customer.id, hwid: "hw-one" });
    expect(await oneRow("device.remove", customer.email)).toEqual({ hwid: { old: "hw-one" } });
    await ok(admin, "/api/admin/users/remove_devices", { uid: customer.id });
    expect(await oneRow("device.remove", customer.email)).toEqual({ devices: { old: 1, new: 0 } });
    await ok(admin, "/api/admin/users/change_password", {
      email: customer.email,
      password: transformPassword(NEW_PASSWORD),
    });
    expect(await oneRow("user.change_password", customer.email)).toEqual({
      password: { old: SECRET_MASK, new: SECRET_MASK },
    });
    // The change signed the customer out everywhere: back in with the new password.
    expect((await customer.client.login(customer.email, NEW_PASSWORD)).code).toBe(Code.ok);
  });

  test("coupons (yunying): create, update, one row for a batch, delete", async () => {
    const coupon = await ok<Coupon>(yunying, "/api/yunying/coupon/update_coupon", {
      type: "discount",
      discount: 0.8,
      code: "AUDIT80",
      name: "八折",
    });
    const created = await oneRow("coupon.create", "AUDIT80", "yunying");
    expect(created.discount).toEqual({ new: 0.8 });
    await ok(yunying, "/api/yunying/coupon/update_coupon", { ...coupon, name: "八折券" });
    expect(await oneRow("coupon.update", "AUDIT80", "yunying")).toEqual({
      name: { old: "八折", new: "八折券" },
    });
    const batch = await ok<Coupon[]>(yunying, "/api/yunying/coupon/batch_create", {
      type: "discount",
      discount: 0.9,
      count: 3,
    });
    const batchDiff = await oneRow("coupon.batch_create", "3", "yunying");
    expect(batchDiff.codes).toEqual({ new: batch.map((c) => c.code) });
    expect(batchDiff.discount).toEqual({ new: 0.9 });
    await ok(yunying, "/api/yunying/coupon/delete_coupon", { id_list: [coupon._id] });
    expect(await oneRow("coupon.delete", "AUDIT80", "yunying")).toEqual({
      coupons: { old: [{ code: "AUDIT80", name: "八折券" }] },
    });
  });

  test("prizes (yunying): create, update, delete", async () => {
    const prize = await ok<Prize>(yunying, "/api/yunying/prize/update", {
      name: "审计奖",
      gainTraffic: 1,
      gainVipTime: 0,
      weight: 1,
    });
    expect((await oneRow("prize.create", prize._id, "yunying")).name).toEqual({ new: "审计奖" });
    await ok(yunying, "/api/yunying/prize/update", { ...prize, weight: 4 });
    expect(await oneRow("prize.update", prize._id, "yunying")).toEqual({ weight: { old: 1, new: 4 } });
    await ok(yunying, "/api/yunying/prize/delete", { id: prize._id });
    expect(await oneRow("prize.delete", prize._id, "yunying")).toEqual({
      name: { old: "审计奖" },
      weight: { old: 4 },
    });
  });

  test("withdrawals: message (a notice), checkout, refuse", async () => {
    const open = async (id: string) =>
      await server.context.db.run(
        `INSERT INTO withdrawals (id, user_id, money_fen, address_type, address, left_fen, request_time)
           VALUES (?, ?, 50000, 'TRC20', 'TXaddr', 0, ?)`,
        id,
        customer.id,
        Date.now(),
      );
    const first = "a1b2c3d4e5f6a7b8c9d0e1f2";
    await open(first);
    await ok(admin, "/api/admin/charge/message", { charge_id: first, msg: "处理中" });
    expect(await oneRow("notice.withdrawal_message", first)).toEqual({ msg: { old: "", new: "处理中" } });
    await ok(admin, "/api/admin/charge/checkout_charge", { charge_id: first, txid: "tx-1" });
    expect(await oneRow("withdrawal.checkout", first)).toEqual({
      status: { old: "request", new: "paid" },
      money: { new: 500 },
      txid: { new: "tx-1" },
    });
    const second = "b1b2c3d4e5f6a7b8c9d0e1f2";
    await open(second);
    await ok(admin, "/api/admin/charge/refuse_charge", { charge_id: second, reason: "地址错误" });
    expect(await oneRow("withdrawal.refuse", second)).toEqual({
      status: { old: "request", new: "refused" },
      money: { new: 500 },
      reason: { new: "地址错误" },
    });
  });

  test("agencies: set, attach, detach, unset", async () => {
    const owner = await loggedInClient(server);
    const member = await loggedInClient(server);
    await ok(admin, "/api/admin/agency/set", { email: owner.email, name: "审计代理" });
    expect(await oneRow("agency.set", owner.email)).toEqual({ name: { new: "审计代理" } });
    await ok(admin, "/api/admin/agency/attach", { agency_email: owner.email, customer_email: member.email });
    expect(await oneRow("agency.attach", member.email)).toEqual({ agency: { old: "", new: owner.email } });
    await ok(admin, "/api/admin/agency/detach", { agency_email: owner.email, customer_email: member.email });
    expect(await oneRow("agency.detach", member.email)).toEqual({ agency: { old: owner.email, new: "" } });
    await ok(admin, "/api/admin/agency/unset", { email: owner.email });
    expect(await oneRow("agency.unset", owner.email)).toEqual({
      name: { old: "审计代理" },
      customers: { old: 0, new: 0 },
    });
  });

  test("tickets: an admin's reply and close; the customer's own ticket and reply write none", async () => {
    const ticket = await ok<Ticket>(customer.client, "/api/feedback/create", {
      title: "连不上",
      desc: "求助",
    });
    await ok(customer.client, "/api/feedback/response", { id: ticket._id, desc: "还在吗" });
    await noRows();
    await ok(admin, "/api/feedback/response", { id: ticket._id, desc: "请重试" });
    expect(await oneRow("ticket.reply", ticket._id)).toEqual({
      status: { old: "open", new: "responsed" },
      reply: { new: "请重试" },
    });
    await ok(admin, "/api/feedback/close", { id: ticket._id });
    expect(await oneRow("ticket.close", ticket._id)).toEqual({
      status: { old: "responsed", new: "close" },
      title: { old: "连不上" },
    });
  });

  test("errors: clear", async () => {
    await ok(admin, "/api/admin/errors/clear");
    expect(await oneRow("errors.clear", "")).toMatchObject({ errors: { new: 0 } });
  });
});

/** A node whose agent answers on loopback with the real control server: upgraded once. */
async function upgradeOnce(agent: Agent) {
  const binary = serveAgentBinary("ferry-audit-", "#!/bin/sh\necho 'ferry 0.1.0'\n");
  const row = (await findAgentRow(server.context, agent._id)) as AgentRow;
  const control = startControlServer({
    host: "127.0.0.1",
    port: 0,
    token: row.api_token,
    panelUrl: server.url,
    exe: `${binary.dir}/ferry-node`,
    agent: {
      sync: async () => ({ users: 0 }),
      status: () => ({ version: "0.0.9", users: 0, core: "running", pendingReports: 0, lastPushTime: 0 }),
      upgraded: () => {},
    },
  });
  try {
    await Bun.write(`${binary.dir}/ferry-node`, "#!/bin/sh\necho 'ferry 0.0.9'\n");
    const moved = {
      ...V2RAY_NODE,
      name: "审计节点2",
      country: { code: "HK" },
      ip: "127.0.0.1",
      ctrl_port: control.port,
    };
    await ok(admin, "/api/admin/agents/update", { ...moved, _id: agent._id });
    await oneRow("node.update", agent._id);
    const upgraded = await ok<{ version: string }>(admin, "/api/admin/agents/upgrade_agentserver", agent);
    expect(await oneRow("node.upgrade", agent._id)).toEqual({
      agent_version: { old: "0.0.9", new: upgraded.version },
    });
  } finally {
    await control.stop();
    binary.restore();
  }
}

describe("what writes no row", () => {
  test("read-only calls of the back office", async () => {
    const reads: [ApiClient, string, unknown][] = [
      [admin, "/api/admin/config/get", {}],
      [admin, "/api/admin/config/pay_status", {}],
      [admin, "/api/admin/combo/list", {}],
      [admin, "/api/admin/permissions/list", {}],
      [admin, "/api/admin/agents/list", {}],
      [admin, "/api/admin/entrys/list", {}],
      [admin, "/api/admin/agent_line/list", {}],
      [admin, "/api/admin/users/userlist", {}],
      [admin, "/api/admin/users/user", { uid: customer.id }],
      [admin, "/api/admin/users/devices", { uid: customer.id }],
      [admin, "/api/admin/users/get_user_channel", { user_id: customer.id }],
      [admin, "/api/admin/charge/charge_list", {}],
      [admin, "/api/admin/charge/wallet", { uid: customer.id }],
      [admin, "/api/admin/agency/list", {}],
      [admin, "/api/admin/errors/list", {}],
      [admin, "/api/admin/trades/tradelist", {}],
      [admin, "/api/admin/replicas", {}],
      [admin, "/api/admin/audit/list", {}],
      [yunying, "/api/yunying/coupon/coupon_list", {}],
      [yunying, "/api/yunying/coupon/coupon_record_list", {}],
      [yunying, "/api/yunying/prize/list", {}],
    ];
    for (const [client, path, payload] of reads) await ok(client, path, payload);
    await noRows();
  });

  test("refused and rolled-back changes", async () => {
    const missing = "0123456789abcdef01234567";
    expect(
      (
        await admin.call("/api/admin/combo/update_combo", {
          _id: missing,
          name: "x",
          price: 1,
          traffic: 1,
          vipDuration: 0,
        })
      ).code,
    ).toBe(Code.notFound);
    expect((await admin.call("/api/admin/config/set_config", { gameSeat: -5 })).code).toBe(Code.badInput);
    expect((await admin.call("/api/admin/users/update_user", { _id: adminId, disable: true })).code).toBe(
      Code.badInput,
    );
    // The permission is granted by a combo: its delete is refused inside the transaction.
    const held = await ok<PermissionItem>(admin, "/api/admin/permissions/update", {
      name: "被占用",
      desc: "",
    });
    const combo = await ok<Combo>(admin, "/api/admin/combo/update_combo", {
      name: "授权套餐",
      price: 1,
      traffic: 1,
      vipDuration: 0,
      permissionsGain: [held._id],
    });
    await newRows();
    expect((await admin.call("/api/admin/permissions/delete", { id: held._id })).code).toBe(Code.badInput);
    // A balance taken below zero is refused whole: no ledger row, no audit row.
    const refused = await admin.call("/api/admin/users/update_user", {
      _id: customer.id,
      scale: 3,
      adjust: { walletYuan: -100000, reason: "过多" },
    });
    expect(refused.code).toBe(Code.badInput);
    expect((await ok<{ scale: number }>(admin, "/api/admin/users/user", { uid: customer.id })).scale).toBe(
      2.5,
    );
    await noRows();
    await ok(admin, "/api/admin/combo/delete_combo", { id: combo._id });
    await newRows();
  });
});

describe("reading the trail", () => {
  test("admins read it with filters; yunying and customers may not; no secret anywhere", async () => {
    expect((await yunying.call("/api/admin/audit/list", {})).code).toBe(Code.forbidden);
    expect((await customer.client.call("/api/admin/audit/list", {})).code).toBe(Code.forbidden);
    const page = await ok<AuditPage>(admin, "/api/admin/audit/list", { pageSize: 0 });
    expect(page.total).toBeGreaterThan(40);
    const times = page.list.map((row) => row.time);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const settings = await ok<AuditPage>(admin, "/api/admin/audit/list", {
      action: "settings",
      who: adminEmail,
    });
    expect(settings.list.map((row) => row.action)).toEqual(Array(4).fill("settings.update"));
    const byTarget = await ok<AuditPage>(admin, "/api/admin/audit/list", { target: "AUDIT80" });
    expect(byTarget.list.map((row) => row.action)).toEqual([
      "coupon.delete",
      "coupon.update",
      "coupon.create",
    ]);
    const paged = await ok<AuditPage>(admin, "/api/admin/audit/list", { page: 2, pageSize: 5 });
    expect(paged.list.map((row) => row.id)).toEqual(page.list.slice(5, 10).map((row) => row.id));
    const future = await ok<AuditPage>(admin, "/api/admin/audit/list", { from: "2999-01-01" });
    expect(future).toEqual({ list: [], total: 0 });
    const today = new Date().toISOString().slice(0, 10);
    const around = await ok<AuditPage>(admin, "/api/admin/audit/list", {
      from: addDay(today, -1),
      to: addDay(today, 1),
      pageSize: 0,
    });
    expect(around.total).toBe(page.total);

    // The list's raw answer and every stored row are free of the secrets.
    const raw = await admin.raw(
      "/api/admin/audit/list",
      JSON.stringify({ data: toBase64Json({ pageSize: 0 }) }),
    );
    const body = (await raw.json()) as { data: string };
    const decoded = JSON.stringify(fromBase64Json(body.data));
    const stored = JSON.stringify(await server.context.db.all("SELECT * FROM audit_log"));
    for (const text of [decoded, stored]) {
      for (const secret of [
        SMTP_SECRET,
        EPAY_SECRET,
        WEBHOOK_SECRET,
        "ssh-Secret-1",
        "ssh-Secret-2",
        NEW_PASSWORD,
      ]) {
        expect(text).not.toContain(secret);
      }
    }
    await noRows();
  });

  test("rows are never edited or deleted", async () => {
    const db = server.context.db;
    await expect(db.run("UPDATE audit_log SET actor = 'someone'")).rejects.toThrow(/never edited/);
    await expect(db.run("DELETE FROM audit_log")).rejects.toThrow(/never deleted/);
  });
});

describe("the CLI", () => {
  test("operator commands write rows as cli@<host>; ferry audit --json lists them newest first", async () => {
    const actor = `cli@${hostname()}`;
    await cli.ok(["coupon", "create", "--type", "discount", "--discount", "0.7", "--code", "CLI70"]);
    await cli.ok(["user", "set-devices", customer.email, "5"]);
    await cli.ok(["user", "set-role", customer.email, "yunying"]);
    const created = await ferry(
      cli.withData(["user", "create", "--email", "cli-made@example.com"]),
      {},
      "long-password-1\n",
    );
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: "" });
    const rows = await newRows();
    expect(rows.map((r) => [r.actor, r.actor_id, r.ip, r.action, r.target])).toEqual([
      [actor, null, "", "coupon.create", "CLI70"],
      [actor, null, "", "device.set_limit", customer.email],
      [actor, null, "", "user.set_role", customer.email],
      [actor, null, "", "user.create", "cli-made@example.com"],
    ]);
    expect(rows[1]?.diff).toEqual({ deviceLimit: { old: 3, new: 5 } });
    // The password was typed on stdin: it is in no row.
    expect(JSON.stringify(rows)).not.toContain("long-password-1");

    const listed = await cli.json<
      { time: string; actor: string; ip: string; action: string; target: string; diff: unknown }[]
    >(["audit", "--who", "cli@"]);
    expect(listed.map((r) => [r.actor, r.action, r.target])).toEqual([
      [actor, "user.create", "cli-made@example.com"],
      [actor, "user.set_role", customer.email],
      [actor, "device.set_limit", customer.email],
      [actor, "coupon.create", "CLI70"],
    ]);
    expect(listed[1]).toEqual({
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      actor,
      ip: "",
      action: "user.set_role",
      target: customer.email,
      diff: { type: { old: "channel", new: "yunying" } },
    });
    const all = await cli.json<{ action: string }[]>(["audit", "--since", "1h"]);
    const count = await server.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM audit_log");
    expect(all.length).toBe(Number(count?.n));
    expect(await cli.json<unknown[]>(["audit", "--since", "2999-01-01"])).toEqual([]);
    const table = await cli.ok(["audit", "--who", "cli@", "--since", "7d"]);
    expect(table.split("\n")[0]).toMatch(/^time +actor +ip +action +target +diff$/);
    expect(table).toContain(`${actor}  -   user.set_role`);
    expectOneLineError(await ferry(cli.withData(["audit", "--since", "yesterday-ish"])), /--since/);
    // Reading writes nothing.
    await noRows();
  });
});

function addDay(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}
