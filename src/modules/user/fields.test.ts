/**
 * The user fields an admin edits and two settings, each observed through the path a customer or a
 * node meets (issue 16, docs/decisions.md "User fields"): scale and noGlobalTrafficScaleLimit in
 * node charging, the special daily quota in charging, node user lists, userinfo and subscriptions,
 * normalPermission in line visibility, vip_traffic_thred_rate_limit in node user lists, forceReward
 * in channel rebates, canChangeDescribeKey and canChangePassword in the customer's own flows.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOrder, makeCombo, startShopServer } from "../../../tests/commerce.ts";
import { ApiClient, loggedInClient, setUserColumns, type TestServer } from "../../../tests/harness.ts";
import { confirmLinkOf, type MailSink, sinkSettings, startMailSink } from "../../../tests/mail-sink.ts";
import { saveNode } from "../../../tests/nodes.ts";
import { chargeNode, makeChargingNode, noonZone } from "../../../tests/traffic.ts";
import { DAY_MS } from "../../lib/time.ts";
import { DEFAULT_DAILY_LIMIT, GB } from "../../lib/traffic.ts";
import { settleWithoutGateway } from "../../payments/credit.ts";
import { Code } from "../../rpc/codes.ts";
import type { Channel } from "../channel/schema.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import { servedUserList } from "../node-api/service.ts";
import { type AgentRow, findAgentRow } from "../node-record/service.ts";
import { savePermission } from "../permission/service.ts";
import { transformPassword } from "./password.ts";
import type { UserRow } from "./row.ts";
import type { UserInfo } from "./schema.ts";
import { findUserById } from "./service.ts";

let server: TestServer;
let sink: MailSink;
let admin: ApiClient;
let nodeId: string;
const zone = noonZone();

beforeAll(async () => {
  server = await startShopServer();
  sink = await startMailSink();
  admin = (await loggedInClient(server, { role: "admin" })).client;
  await server.context.settings.update(sinkSettings(sink));
  nodeId = await makeChargingNode(server, zone);
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

type Fields = Partial<
  Pick<
    UserRow,
    | "scale"
    | "traffic"
    | "vip_expire_time"
    | "daily_limit"
    | "normal_permission"
    | "special_daily_unlimit_traffic"
    | "daily_unlimit_traffic"
    | "force_reward"
    | "can_change_password"
    | "can_change_describe_key"
  >
>;

/** Sets columns as the admin edit form stores them. */
async function setFields(userId: string, fields: Fields) {
  await setUserColumns(server.context.db, userId, fields);
}

async function customer(fields: Fields = {}) {
  const made = await loggedInClient(server);
  await setFields(made.user.id, fields);
  return made;
}

const row = async (userId: string) => (await findUserById(server.context, userId)) as UserRow;

/** What a node is served: `{users:[{id, uuid, speed_limit, device_limit}]}`. */
async function nodeList(agentId = nodeId) {
  const agent = (await findAgentRow(server.context, agentId)) as AgentRow;
  const body = JSON.parse((await servedUserList(server.context, agent)).body) as {
    users: { id: number; speed_limit: number | null }[];
  };
  return body.users;
}

const listed = async (user: UserRow, agentId = nodeId) =>
  (await nodeList(agentId)).some((u) => u.id === user.node_uid);

async function subscription(user: UserRow) {
  const response = await fetch(`${server.url}/api/subscript/v2ray/${user.id}/${user.userkey}`);
  expect(response.status).toBe(200);
  const names = Buffer.from(await response.text(), "base64")
    .toString("utf8")
    .split("\n")
    // The profile's `#key: value` lines come first; v2rayN skips what is not a link.
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map(
      (uri) =>
        (JSON.parse(Buffer.from(uri.slice("vmess://".length), "base64").toString()) as { ps: string }).ps,
    );
  return { userinfo: response.headers.get("subscription-userinfo"), names };
}

describe("traffic scales", () => {
  test("scale multiplies the charge; the global download scale multiplies it too by default", async () => {
    await server.context.settings.update({ traffic_spend_scale: 3 });
    try {
      const { user } = await customer({ traffic: 100 * GB, scale: 2 });
      const result = await chargeNode(server, nodeId, { [user.node_uid]: [0, GB] }, Date.now());
      expect(result.charged).toBe(6 * GB);
      expect((await row(user.id)).traffic).toBe(94 * GB);
    } finally {
      await server.context.settings.update({ traffic_spend_scale: 1 });
    }
  });

  test("noGlobalTrafficScaleLimit: the user's own scale replaces both global scales", async () => {
    await server.context.settings.update({
      traffic_spend_scale: 3,
      upload_traffic_spend_scale: 5,
      noGlobalTrafficScaleLimit: true,
    });
    try {
      const { user } = await customer({ traffic: 100 * GB, scale: 2 });
      const result = await chargeNode(server, nodeId, { [user.node_uid]: [GB, GB] }, Date.now());
      expect(result.charged).toBe(4 * GB);
      expect((await row(user.id)).traffic).toBe(96 * GB);
    } finally {
      await server.context.settings.update({
        traffic_spend_scale: 1,
        upload_traffic_spend_scale: 1,
        noGlobalTrafficScaleLimit: false,
      });
    }
  });
});

describe("specialDailyUnlimitTraffic / dailyUnlimitTraffic", () => {
  test("replace the time package's daily quota in userinfo, the subscription, charging and the node list", async () => {
    const now = Date.now();
    const { user, client } = await customer({
      vip_expire_time: now + 10 * DAY_MS,
      daily_limit: 20 * GB,
      special_daily_unlimit_traffic: 1,
      daily_unlimit_traffic: 2 * GB,
    });
    const info = await client.call<UserInfo>("/api/user/userinfo");
    expect(info.data.limit).toBe(2 * GB);
    expect((await subscription(await row(user.id))).userinfo).toBe(
      `upload=0; download=0; total=${2 * GB}; expire=${Math.floor((now + 10 * DAY_MS) / 1000)}`,
    );
    expect(await listed(await row(user.id))).toBe(true);

    // 3 G moved: 2 G from the special quota, the rest finds nothing (no permanent traffic).
    await chargeNode(server, nodeId, { [user.node_uid]: [0, 3 * GB] }, now);
    const after = await row(user.id);
    expect(after.daily_usage).toBe(2 * GB);
    expect(after.spend_traffic).toBe(2 * GB);
    expect(await listed(after)).toBe(false);

    // Turned off: the package's own 20 G applies again and the user is back on the list.
    await setFields(user.id, { special_daily_unlimit_traffic: 0 });
    expect((await client.call<UserInfo>("/api/user/userinfo")).data.limit).toBe(20 * GB);
    expect(await listed(await row(user.id))).toBe(true);
  });

  test("a special quota can be larger than the default, and 0 means no time-package traffic today", async () => {
    const now = Date.now();
    const { user } = await customer({
      vip_expire_time: now + DAY_MS,
      special_daily_unlimit_traffic: 1,
      daily_unlimit_traffic: DEFAULT_DAILY_LIMIT + 10 * GB,
    });
    await chargeNode(server, nodeId, { [user.node_uid]: [0, DEFAULT_DAILY_LIMIT + 5 * GB] }, now);
    expect((await row(user.id)).daily_usage).toBe(DEFAULT_DAILY_LIMIT + 5 * GB);
    expect(await listed(await row(user.id))).toBe(true);

    await setFields(user.id, { daily_unlimit_traffic: 0 });
    expect(await listed(await row(user.id))).toBe(false);
  });
});

describe("normalPermission", () => {
  test("a user with it sees and may use every line that requires a permission", async () => {
    const ctx = server.context;
    const permission = await savePermission(ctx, { name: `专线-${Date.now()}`, desc: "" });
    const agent = await saveNode(server, {
      name: "东京 01",
      country: { code: "JP" },
      ip: "203.0.113.77",
      port: 11000,
      public_port: 11000,
    });
    await saveLine(
      ctx,
      lineInput.parse({
        name: "权限专线",
        agentID: agent._id,
        protocol: "vmesh_tcp",
        bridge: "none",
        permissionRequire: permission._id,
      }),
    );
    const { user } = await customer({ traffic: 10 * GB });
    expect(await listed(await row(user.id), agent._id)).toBe(false);
    expect((await subscription(await row(user.id))).names.join("\n")).not.toContain("权限专线");

    await setFields(user.id, { normal_permission: 1 });
    expect(await listed(await row(user.id), agent._id)).toBe(true);
    expect((await subscription(await row(user.id))).names.join("\n")).toContain("权限专线");
  });
});

describe("vip_traffic_thred_rate_limit", () => {
  test("node lists give users on today's time-package quota that speed limit in Mbps, none on permanent traffic", async () => {
    const now = Date.now();
    const vip = (await customer({ vip_expire_time: now + DAY_MS, traffic: 10 * GB, daily_limit: GB })).user;
    const permanent = (await customer({ traffic: 10 * GB })).user;
    const speedOf = async (user: UserRow) =>
      (await nodeList()).find((u) => u.id === user.node_uid)?.speed_limit;
    expect(await speedOf(vip)).toBeNull();
    await server.context.settings.update({ vip_traffic_thred_rate_limit: 30 });
    try {
      expect(await speedOf(vip)).toBe(30);
      expect(await speedOf(permanent)).toBeNull();
      // Today's quota used up: what follows is paid permanent traffic, at full speed.
      await chargeNode(server, nodeId, { [vip.node_uid]: [0, 2 * GB] }, now);
      expect((await row(vip.id)).traffic).toBe(9 * GB);
      expect(await speedOf(vip)).toBeNull();
    } finally {
      await server.context.settings.update({ vip_traffic_thred_rate_limit: 0 });
    }
  });
});

describe("forceReward", () => {
  test("the channel earns on a forceReward customer's orders after comsumerDuration", async () => {
    const owner = await loggedInClient(server);
    const channel = await admin.call<Channel>("/api/admin/users/update_channel", {
      email: owner.email,
      code: "FORCE1",
      rewardRate: 0.1,
      comsumerDuration: 1,
    });
    expect(channel.code).toBe(0);
    const combo = await makeCombo(server, { name: "包月", price: 20, traffic: 100 });
    const paidLate = async (force: number) => {
      const { user, client } = await customer({ force_reward: force });
      await server.context.db.run("UPDATE users SET channel_code = 'FORCE1' WHERE id = ?", user.id);
      const order = await createOrder(client, combo._id);
      const late = user.create_time + 2 * DAY_MS;
      expect((await settleWithoutGateway(server.context, order._id, "manual", "test", late)).result).toBe(
        "credited",
      );
      return (await row(owner.user.id)).wallet_fen;
    };
    expect(await paidLate(0)).toBe(0);
    expect(await paidLate(1)).toBe(200);
  });
});

describe("canChangeDescribeKey / canChangePassword", () => {
  test("canChangeDescribeKey off: reset_userkey is refused with 1033 and the key stays", async () => {
    const { user, client } = await customer({ can_change_describe_key: 0 });
    const answer = await client.call("/api/user/reset_userkey");
    expect(answer).toMatchObject({ code: Code.accountRefused, msg: "该账号不允许这样操作。" });
    expect((await row(user.id)).userkey).toBe(user.userkey);
  });

  test("canChangePassword off after a reset was mailed: the link no longer changes the password", async () => {
    const { user, email, password } = await customer();
    const asked = await new ApiClient(server.url).call("/api/user/reset_password", {
      email,
      password: transformPassword("new-password-2"),
      describUrl: `${server.url}/api/subscript/v2ray/${user.id}/${user.userkey}`,
    });
    expect(asked.code).toBe(0);
    const link = confirmLinkOf(await sink.waitFor(email));
    await setFields(user.id, { can_change_password: 0 });
    const response = await new ApiClient(server.url).raw(
      "/api/account/change_password",
      JSON.stringify({
        serial_id: link.serialId,
        key: link.key,
        password: transformPassword("new-password-2"),
      }),
    );
    expect(await response.json()).toEqual({ Code: Code.accountRefused, msg: "该账号不允许这样操作。" });
    expect((await new ApiClient(server.url).login(email, password)).code).toBe(0);
    expect((await new ApiClient(server.url).login(email, "new-password-2")).code).toBe(1000);
    // A new request is refused up front.
    const again = await new ApiClient(server.url).call("/api/user/reset_password", {
      email,
      password: transformPassword("new-password-3"),
      describUrl: `${server.url}/api/subscript/v2ray/${user.id}/${user.userkey}`,
    });
    expect(again.code).toBe(Code.accountRefused);
  });
});
