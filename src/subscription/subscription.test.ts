/**
 * Which lines a user's subscription lists (DESIGN §7: public, permission held and unexpired,
 * agency, disabled user, traffic or time package left), and the HTTP edge: 404 with an empty body,
 * the headers clients read, the notice entry, client detection, reset, and fresh output after edits.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ApiClient,
  loggedInClient,
  setUserColumns,
  startTestServer,
  type TestServer,
} from "../../tests/harness.ts";
import { saveNode } from "../../tests/nodes.ts";
import { GB } from "../lib/traffic.ts";
import { entryInput } from "../modules/entry/schema.ts";
import { deleteEntry, saveEntry } from "../modules/entry/service.ts";
import { lineInput } from "../modules/line/schema.ts";
import { saveLine } from "../modules/line/service.ts";
import type { Country } from "../modules/node-record/schema.ts";
import { savePermission } from "../modules/permission/service.ts";
import type { UserRow } from "../modules/user/row.ts";
import { findUserById } from "../modules/user/service.ts";
import { Notice, subscriptionProxies } from "./service.ts";

let server: TestServer;
const DAY = 86_400_000;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const ctx = () => server.context;

async function node(fields: Record<string, unknown> = {}) {
  return await saveNode(server, { name: "香港", ip: "203.0.113.9", host: "hk.example.com", ...fields });
}

async function line(agentID: string, name: string, fields: Record<string, unknown> = {}) {
  return await saveLine(
    ctx(),
    lineInput.parse({ name, agentID, protocol: "vmesh_tcp", bridge: "none", ...fields }),
  );
}

async function customer(fields: Partial<Record<keyof UserRow, number>> = { traffic: 10 * GB }) {
  const made = await loggedInClient(server);
  await setUserColumns(ctx().db, made.user.id, fields);
  return { ...made, user: (await findUserById(ctx(), made.user.id)) as UserRow };
}

const names = async (user: UserRow, format: "v2ray" | "clash" = "v2ray") =>
  (await subscriptionProxies(ctx(), (await findUserById(ctx(), user.id)) as UserRow, format)).proxies.map(
    (p) => p.name,
  );

async function grant(userId: string, permissionId: string, expireTime: number) {
  await ctx().db.run(
    `INSERT INTO user_permissions (user_id, permission_id, expire_time) VALUES (?, ?, ?)
      ON CONFLICT (user_id, permission_id) DO UPDATE SET expire_time = excluded.expire_time`,
    userId,
    permissionId,
    expireTime,
  );
}

describe("line visibility", () => {
  test("public lines are listed, private ones are not", async () => {
    const agent = await node();
    await line(agent._id, "公开线路");
    await line(agent._id, "私有线路", { public: false });
    const { user } = await customer();
    const listed = await names(user);
    expect(listed.some((n) => n.startsWith("公开线路"))).toBe(true);
    expect(listed.some((n) => n.startsWith("私有线路"))).toBe(false);
  });

  test("a permission line needs the permission held and unexpired; a deleted permission hides it", async () => {
    const agent = await node();
    const permission = await savePermission(ctx(), { name: `4K专线-${Date.now()}`, desc: "" });
    await line(agent._id, "权限线路", { permissionRequire: permission._id });
    const { user: without } = await customer();
    const { user: holder } = await customer();
    const { user: expired } = await customer();
    await grant(holder.id, permission._id, Date.now() + DAY);
    await grant(expired.id, permission._id, Date.now() - 1000);
    const has = async (user: UserRow) => (await names(user)).some((n) => n.startsWith("权限线路"));
    expect([await has(without), await has(holder), await has(expired)]).toEqual([false, true, false]);

    await ctx().db.run("DELETE FROM permissions WHERE id = ?", permission._id);
    expect(await has(holder)).toBe(false);
  });

  test("disableForAgency hides a line from agency users only", async () => {
    const agent = await node();
    await line(agent._id, "非代理线路", { disableForAgency: true });
    const { user: agency } = await customer({ traffic: GB, is_agency: 1 });
    const { user: normal } = await customer();
    expect((await names(agency)).some((n) => n.startsWith("非代理线路"))).toBe(false);
    expect((await names(normal)).some((n) => n.startsWith("非代理线路"))).toBe(true);
  });

  test("a disabled user, and a user without traffic, get only the notice", async () => {
    await node();
    const { user: disabled } = await customer({ traffic: 10 * GB, disabled: 1 });
    const { user: empty } = await customer({ traffic: 0 });
    expect(await subscriptionProxies(ctx(), disabled, "v2ray")).toMatchObject({ notice: Notice.disabled });
    expect(await subscriptionProxies(ctx(), empty, "v2ray")).toMatchObject({ notice: Notice.noTraffic });
    expect(await names(empty)).toEqual([Notice.noTraffic]);
  });

  test("a running time package counts as traffic left until today's quota is used; expiry ends it", async () => {
    const agent = await node();
    await line(agent._id, "时间套餐线路");
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: "Asia/Shanghai" }).format(new Date());
    const { user: running } = await customer({
      traffic: 0,
      vip_expire_time: Date.now() + DAY,
      daily_limit: GB,
    });
    const { user: usedUp } = await customer({
      traffic: 0,
      vip_expire_time: Date.now() + DAY,
      daily_limit: GB,
      daily_usage: GB,
    });
    await ctx().db.run("UPDATE balances SET daily_usage_day = ? WHERE user_id = ?", today, usedUp.id);
    const { user: expired } = await customer({ traffic: 0, vip_expire_time: Date.now() - 1000 });
    expect((await names(running)).some((n) => n.startsWith("时间套餐线路"))).toBe(true);
    expect(await names(usedUp)).toEqual([Notice.noTraffic]);
    expect(await names(expired)).toEqual([Notice.noTraffic]);
  });

  test("relayed lines need a visible entry and give one proxy per copy and entry address", async () => {
    const agent = await node();
    const entry = await saveEntry(
      ctx(),
      entryInput.parse({ name: "入口", ip: "198.51.100.9", ipList: ["198.51.100.1", "198.51.100.2"] }),
    );
    await line(agent._id, "中转线路", { bridge: "report", entryID: entry._id, num: 2, scale: 1.5 });
    const { user } = await customer();
    const relayed = (await subscriptionProxies(ctx(), user, "v2ray")).proxies.filter((p) =>
      p.name.startsWith("中转线路"),
    );
    expect(relayed.map((p) => [p.name, p.server, p.port])).toEqual([
      ["中转线路 01-1 [1.5x]", "198.51.100.1", 20000],
      ["中转线路 01-2 [1.5x]", "198.51.100.2", 20000],
      ["中转线路 02-1 [1.5x]", "198.51.100.1", 20000],
      ["中转线路 02-2 [1.5x]", "198.51.100.2", 20000],
    ]);

    await saveEntry(
      ctx(),
      entryInput.parse({ _id: entry._id, name: "入口", ip: "198.51.100.9", visible: false }),
    );
    expect((await names(user)).some((n) => n.startsWith("中转线路"))).toBe(false);
    await deleteEntry(ctx(), entry._id);
    expect((await names(user)).some((n) => n.startsWith("中转线路"))).toBe(false);
  });

  test("a client that can express none of the lines gets the notice instead of a broken file", async () => {
    await ctx().db.run("DELETE FROM agents");
    const agent = await node({
      type: "reality",
      host: "www.example.org",
      port: 443,
      public_port: 443,
      zz_port: 443,
    });
    await line(agent._id, "Reality", { protocol: "reality" });
    const { user } = await customer();
    expect(await names(user, "v2ray")).toEqual(["Reality [1x]"]);
    expect(await names(user, "clash")).toEqual([Notice.unsupported]);
  });
});

describe("subscription HTTP edge", () => {
  let base: string;
  let user: UserRow;
  let client: ApiClient;

  beforeAll(async () => {
    await ctx().db.run("DELETE FROM agents");
    const agent = await node();
    await line(agent._id, "香港 TCP");
    await line(agent._id, "香港 SS", { protocol: "ss" });
    await line(agent._id, "香港 SSR", { protocol: "compat" });
    const made = await customer({ traffic: 30 * GB, spend_traffic: 5 * GB });
    user = made.user;
    client = made.client;
    base = `${server.url}/api/subscript`;
  });

  const link = (clientKey: string, u: Pick<UserRow, "id" | "userkey"> = user) =>
    `${base}/${clientKey}/${u.id}/${u.userkey}`;
  const decode = (body: string) => Buffer.from(body, "base64").toString("utf8");
  /** The share links, as v2rayN reads them: the `#key: value` profile lines on top are not links. */
  const uris = (body: string) =>
    decode(body)
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"));
  /** The display name of a share URI: the vmess JSON's `ps`, else the `#fragment`. */
  const uriName = (uri: string) =>
    uri.startsWith("vmess://")
      ? (JSON.parse(Buffer.from(uri.slice(8), "base64").toString()) as { ps: string }).ps
      : decodeURIComponent(uri.split("#")[1] ?? "");

  test("a wrong key, an unknown user or an unknown client gets 404 with an empty body", async () => {
    for (const url of [
      link("v2ray", { id: user.id, userkey: "0".repeat(32) }),
      link("v2ray", { id: "0".repeat(24), userkey: user.userkey }),
      link("nosuchclient"),
      `${base}/v2ray/${user.id}/short`,
    ]) {
      const response = await fetch(url);
      expect({ url, status: response.status, body: await response.text() }).toEqual({
        url,
        status: 404,
        body: "",
      });
    }
  });

  test("the headers clients read: usage, update interval, file name, no shared caching", async () => {
    const response = await fetch(link("v2ray"));
    expect(response.status).toBe(200);
    expect(response.headers.get("subscription-userinfo")).toBe(
      `upload=0; download=${5 * GB}; total=${35 * GB}; expire=0`,
    );
    expect(response.headers.get("profile-update-interval")).toBe("24");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename*=UTF-8''${encodeURIComponent("飞渡")}`,
    );
    expect(response.headers.get("cache-control")).toBe("private, no-store");
    const listed = uris(await response.text());
    expect(listed.map(uriName)).toEqual(["香港 TCP [1x]", "香港 SS [1x]", "香港 SSR [1x]"]);
    expect(listed.map((uri) => uri.split("://")[0])).toEqual(["vmess", "ss", "ss"]);
  });

  test("auto picks the format by User-Agent, and ?flag= overrides it", async () => {
    const clash = await fetch(link("auto"), { headers: { "user-agent": "ClashMetaForAndroid/2.10.1.Meta" } });
    expect(clash.headers.get("content-type")).toStartWith("text/yaml");
    const rocket = await fetch(link("auto"), {
      headers: { "user-agent": "Shadowrocket/1993 CFNetwork/1410" },
    });
    expect(decode(await rocket.text())).toStartWith("STATUS=");
    const flagged = await fetch(`${link("auto")}?flag=shadowrocket`, { headers: { "user-agent": "curl/8" } });
    expect(decode(await flagged.text())).toStartWith("STATUS=");
    const generic = await fetch(link("auto"), { headers: { "user-agent": "v2rayN/7.0.0" } });
    expect(uris(await generic.text())[0]).toStartWith("vmess://");
  });

  test("a user without traffic gets a valid file whose only entry tells them so", async () => {
    const { user: empty } = await customer({ traffic: 0 });
    const response = await fetch(link("v2ray", empty));
    expect(response.status).toBe(200);
    expect(uris(await response.text()).map(uriName)).toEqual([Notice.noTraffic]);
  });

  test("an admin's change shows in the next fetch", async () => {
    const before = uris(await (await fetch(link("v2ray"))).text()).map(uriName);
    const agent = await node({ ip: "203.0.113.99" });
    await line(agent._id, "新加线路");
    const after = uris(await (await fetch(link("v2ray"))).text()).map(uriName);
    expect(after).toEqual([...before, "新加线路 [1x]"]);
  });

  test("reset: a new link and new credentials; the old link 404s; refused accounts keep theirs (1033)", async () => {
    const oldLink = link("v2ray");
    const oldBody = await (await fetch(oldLink)).text();
    const answer = await client.call<{ userkey: string }>("/api/user/reset_userkey");
    expect(answer.code).toBe(0);
    const after = (await findUserById(ctx(), user.id)) as UserRow;
    expect(answer.data.userkey).toBe(after.userkey);
    expect(after.userkey).not.toBe(user.userkey);
    expect(after.proxy_secret).not.toBe(user.proxy_secret);
    expect((await fetch(oldLink)).status).toBe(404);
    const newBody = await (await fetch(link("v2ray", after))).text();
    const ids = (body: string) =>
      new Set(
        uris(body)
          .filter((uri) => uri.startsWith("vmess://"))
          .map((uri) => (JSON.parse(Buffer.from(uri.slice(8), "base64").toString()) as { id: string }).id),
      );
    expect(ids(oldBody)).toEqual(new Set([user.proxy_secret]));
    expect(ids(newBody)).toEqual(new Set([after.proxy_secret]));
    user = after;

    const refused = await customer();
    await ctx().db.run("UPDATE users SET can_change_describe_key = 0 WHERE id = ?", refused.user.id);
    const no = await refused.client.call("/api/user/reset_userkey");
    expect({ code: no.code, msg: no.msg }).toEqual({ code: 1033, msg: "该账号不允许这样操作。" });
    expect((await findUserById(ctx(), refused.user.id))?.userkey).toBe(refused.user.userkey);
    expect((await new ApiClient(server.url).call("/api/user/reset_userkey")).code).toBe(1002);
  });

  test("the listing page gives the logged-in user's SSR links; visitors go to log in", async () => {
    const listing = await client.get("/user/getUserAllURL?type=ssr");
    expect(listing.status).toBe(200);
    const lines = (await listing.text()).trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith("ssr://");
    const visitor = await fetch(`${server.url}/user/getUserAllURL?type=ssr`, { redirect: "manual" });
    expect(visitor.status).toBe(302);
    expect(visitor.headers.get("location")).toBe("/#/login");
  });

  test("without a line SSR can use, the listing says so in words and ssr_lines answers 0 (issue 26 D16)", async () => {
    const ssrLines = async (who: ApiClient) =>
      (await who.call<{ lines: number }>("/api/user/ssr_lines")).data;
    expect(await ssrLines(client)).toEqual({ lines: 1 });
    await ctx().db.run("UPDATE agent_lines SET public = 0 WHERE name = '香港 SSR'");
    try {
      const listing = await client.get("/user/getUserAllURL?type=ssr");
      expect(listing.status).toBe(200);
      expect(await listing.text()).toBe(`${Notice.noSsrLines}\n`);
      expect(await ssrLines(client)).toEqual({ lines: 0 });
    } finally {
      await ctx().db.run("UPDATE agent_lines SET public = 1 WHERE name = '香港 SSR'");
    }
    // Out of traffic: the lines are there, the page says why none is listed.
    const empty = await customer({ traffic: 0 });
    expect(await ssrLines(empty.client)).toEqual({ lines: 1 });
    expect(await (await empty.client.get("/user/getUserAllURL?type=ssr")).text()).toBe(
      `${Notice.noTraffic}\n`,
    );
    expect((await new ApiClient(server.url).call("/api/user/ssr_lines")).code).toBe(1002);
  });

  test("rule files keep the subscription host direct: describe_host when set", async () => {
    const plain = await (await fetch(`${server.url}/describe/ss_rule.conf`)).text();
    expect(plain).toContain("DOMAIN,127.0.0.1,DIRECT");
    await ctx().settings.update({ describe_host: "sub.example.com" });
    const conf = await (await fetch(`${server.url}/describe/ss_rule.conf`)).text();
    expect(conf).toContain("DOMAIN,sub.example.com,DIRECT");
    expect(conf).toContain("FINAL,PROXY");
    const filter = await (await fetch(`${server.url}/describe/q.filter`)).text();
    expect(filter).toContain("HOST,sub.example.com,DIRECT");
    await ctx().settings.update({ describe_host: "" });
  });

  test("the country list has flags", async () => {
    const countries = (await (await fetch(`${server.url}/country/country.json`)).json()) as Country[];
    expect(countries.find((c) => c.code === "HK")).toEqual({ code: "HK", name: "香港", flag: "🇭🇰" });
  });
});
