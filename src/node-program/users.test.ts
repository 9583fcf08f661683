/**
 * From one rendered core config to the next: user changes on inbounds that take them live become
 * AlterInbound removals and additions (with the account each core expects), anything else a
 * restart. Configs are the real renderCoreConfig output.
 */
import { describe, expect, test } from "bun:test";
import type { LineProtocol } from "../modules/line/schema.ts";
import { type CoreAgent, type CoreDialect, type CoreUser, renderCoreConfig } from "./core-config.ts";
import type { TypedMessage } from "./grpc.ts";
import { readFields, readString } from "./proto.ts";
import { type CorePlan, planCoreChange } from "./users.ts";

const NODE: CoreAgent = {
  type: "v2ray",
  ip: "203.0.113.9",
  host: "hk.example.com",
  port: 10000,
  ss_method: "aes-256-gcm",
  ws_path: "/a1b2c3",
  reality_private_key: "cHJpdmF0ZS1rZXktZm9yLXRlc3RzLW9ubHktMzItYnl0ZQ",
  reality_short_id: "0123456789abcdef",
  hy2_obfs_password: "obfs-Pa55word",
  ss_server_key: Buffer.alloc(32, 7).toString("base64"),
};
const U1 = { id: "1", uuid: "be0608f5-cdde-42f1-ac19-495976e7289f" };
const U2 = { id: "2", uuid: "a148238f-4e32-4696-a8ca-142a3b5bb42e" };
const U3 = { id: "3", uuid: "0f5b7a52-8d3e-4f53-9d7c-2b1f0e6a9c44" };

function render(
  users: CoreUser[],
  options: { dialect?: CoreDialect; protocols?: LineProtocol[]; agent?: Partial<CoreAgent> } = {},
) {
  return renderCoreConfig({
    agent: { ...NODE, ...options.agent },
    lines: (options.protocols ?? ["vmesh_tcp", "vmesh_ws"]).map((protocol) => ({ protocol })),
    users,
    dialect: options.dialect ?? "v2ray",
    certificate: { certificateFile: "/etc/ferry/cert.pem", keyFile: "/etc/ferry/key.pem" },
  }).config;
}

/** An account as {type, field number → string or number}, decoded from its protobuf bytes. */
function decoded(account: TypedMessage) {
  const fields: Record<number, string | number> = {};
  for (const field of readFields(account.value)) {
    fields[field.field] = "bytes" in field ? readString(field.bytes) : Number(field.varint);
  }
  return { type: account.type, fields };
}

const summary = (plan: CorePlan) => ({
  restart: plan.restart,
  remove: plan.remove.map(({ tag, email }) => `${tag} ${email}`),
  add: plan.add.map(({ tag, user }) => `${tag} ${user.email}`),
});

describe("planCoreChange", () => {
  test("nothing running: start; the same config: nothing to do", () => {
    expect(planCoreChange(null, render([U1]), "v2ray").restart).toBe(true);
    expect(summary(planCoreChange(render([U1, U2]), render([U1, U2]), "v2ray"))).toEqual({
      restart: false,
      remove: [],
      add: [],
    });
  });

  test("VMess users come and go live on every inbound, with the v2ray account", () => {
    const plan = planCoreChange(render([U1, U2]), render([U2, U3]), "v2ray");
    expect(summary(plan)).toEqual({
      restart: false,
      remove: ["vmesh_tcp vmesh_tcp|1", "vmesh_ws vmesh_ws|1"],
      add: ["vmesh_tcp vmesh_tcp|3", "vmesh_ws vmesh_ws|3"],
    });
    const [added] = plan.add;
    expect(added?.user.level).toBe(0);
    // vmess Account {1 id, 3 security_settings {1 type: AUTO = 2}}
    const account = decoded(added?.user.account as TypedMessage);
    expect(account.type).toBe("v2ray.core.proxy.vmess.Account");
    expect(account.fields[1]).toBe(U3.uuid);
    const security = readFields(added?.user.account.value as Uint8Array).find((field) => field.field === 3);
    expect(security && "bytes" in security ? readFields(security.bytes) : []).toEqual([
      { field: 1, varint: 2n },
    ]);
  });

  test("a reset credential under the same e-mail is removed and added again", () => {
    const reset = { id: "2", uuid: "5d0c1c0e-77a4-4c5c-9d6e-6a0f8f3b1b21" };
    const plan = planCoreChange(
      render([U1, U2], { protocols: ["vmesh_tcp"] }),
      render([U1, reset], { protocols: ["vmesh_tcp"] }),
      "v2ray",
    );
    expect(summary(plan)).toEqual({
      restart: false,
      remove: ["vmesh_tcp vmesh_tcp|2"],
      add: ["vmesh_tcp vmesh_tcp|2"],
    });
    expect(decoded(plan.add[0]?.user.account as TypedMessage).fields[1]).toBe(reset.uuid);
  });

  test("v2ray's single-user Shadowsocks inbound changes only by a restart", () => {
    const protocols: LineProtocol[] = ["vmesh_tcp", "ss"];
    expect(planCoreChange(render([U1], { protocols }), render([U2], { protocols }), "v2ray").restart).toBe(
      true,
    );
    // Two users: the SS inbound is left out, so the inbound list itself changed.
    expect(
      planCoreChange(render([U1], { protocols }), render([U1, U2], { protocols }), "v2ray").restart,
    ).toBe(true);
  });

  test("anything but users (a port, a path) means a restart", () => {
    expect(planCoreChange(render([U1]), render([U1], { agent: { port: 10010 } }), "v2ray").restart).toBe(
      true,
    );
    expect(
      planCoreChange(render([U1]), render([U1], { agent: { ws_path: "/other" } }), "v2ray").restart,
    ).toBe(true);
    expect(planCoreChange(render([U1]), render([U1], { protocols: ["vmesh_tcp"] }), "v2ray").restart).toBe(
      true,
    );
  });
});

describe("planCoreChange in the xray dialect (accounts by xray's protos; no xray to run them here)", () => {
  const xray = (users: CoreUser[], protocols: LineProtocol[], agent: Partial<CoreAgent> = {}) =>
    render(users, { dialect: "xray", protocols, agent });

  test("multi-user Shadowsocks is live: classic AEAD names its cipher, 2022 sends the user key", () => {
    const aead = planCoreChange(xray([U1], ["ss"]), xray([U1, U2], ["ss"]), "xray");
    expect(summary(aead)).toEqual({ restart: false, remove: [], add: ["ss ss|2"] });
    // xray.proxy.shadowsocks.Account {1 password, 2 cipher_type: AES_256_GCM = 6}
    expect(decoded(aead.add[0]?.user.account as TypedMessage)).toEqual({
      type: "xray.proxy.shadowsocks.Account",
      fields: { 1: U2.uuid, 2: 6 },
    });

    const node2022 = { ss_method: "2022-blake3-aes-128-gcm" as const, type: "v2ray" as const };
    const ss2022 = planCoreChange(xray([U1], ["ss"], node2022), xray([U1, U2], ["ss"], node2022), "xray");
    expect(decoded(ss2022.add[0]?.user.account as TypedMessage)).toEqual({
      type: "xray.proxy.shadowsocks_2022.Account",
      fields: { 1: Buffer.from(U2.uuid.slice(0, 16)).toString("base64") },
    });
  });

  test("the last Shadowsocks user leaving restarts (xray makes an empty list a single-user server)", () => {
    expect(planCoreChange(xray([U1], ["ss"]), xray([], ["ss"]), "xray").restart).toBe(true);
  });

  test("Reality keeps its flow; Hysteria2 users are auth passwords; VMess uses xray's type names", () => {
    const reality = { type: "reality" as const, port: 443 };
    const vless = planCoreChange(
      xray([U1], ["reality"], reality),
      xray([U1, U2], ["reality"], reality),
      "xray",
    );
    expect(decoded(vless.add[0]?.user.account as TypedMessage)).toEqual({
      type: "xray.proxy.vless.Account",
      fields: { 1: U2.uuid, 2: "xtls-rprx-vision", 3: "none" },
    });

    const h2 = { type: "h2" as const, port: 8443 };
    const hysteria = planCoreChange(xray([U1], ["h2"], h2), xray([U2], ["h2"], h2), "xray");
    expect(summary(hysteria)).toEqual({ restart: false, remove: ["h2 h2|1"], add: ["h2 h2|2"] });
    expect(decoded(hysteria.add[0]?.user.account as TypedMessage)).toEqual({
      type: "xray.proxy.hysteria.account.Account",
      fields: { 1: U2.uuid },
    });

    const vmess = planCoreChange(xray([U1], ["vmesh_tcp"]), xray([U1, U2], ["vmesh_tcp"]), "xray");
    expect(vmess.add[0]?.user.account.type).toBe("xray.proxy.vmess.Account");
  });
});
