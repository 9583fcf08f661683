/**
 * The headers clients read (issue 29 §4) through the real subscription route, on every format:
 * HTTP headers everywhere, `#key: value` lines only at the top of the URI list, each switch in
 * 配置管理, the announcement shown and not, links only from the configured site address (never
 * the Host header), and cached answers carrying the same headers. Also the Xray JSON route and the
 * User-Agents that get it from `auto` (issue 29 §5).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "yaml";
import { loggedInClient, setUserColumns, startTestServer, type TestServer } from "../../tests/harness.ts";
import { saveNode } from "../../tests/nodes.ts";
import { GB } from "../lib/traffic.ts";
import { lineInput } from "../modules/line/schema.ts";
import { saveLine } from "../modules/line/service.ts";
import type { Settings } from "../modules/settings/schema.ts";
import type { UserRow } from "../modules/user/row.ts";
import { CLIENT_FORMATS, type Client, detectFormat } from "./clients.ts";
import { expectGolden } from "./formats/expect-golden.ts";
import { renderV2ray } from "./formats/uri.ts";
import {
  ANNOUNCE_MAX_CHARS,
  announceText,
  base64Text,
  headerLines,
  profileHeaders,
  UPDATE_INTERVAL_HOURS,
} from "./profile-headers.ts";
import { fixtureInput } from "./test-fixture.ts";

const SITE = "https://panel.example.com";
const ANNOUNCEMENT = {
  notice_show: true,
  notice_title: "维护通知",
  notice_content: "今晚 2 点维护\n约 10 分钟",
};
const SWITCHES_ON = {
  sub_header_title: true,
  sub_header_update_interval: true,
  sub_header_userinfo: true,
  sub_header_expire: true,
  sub_header_support_url: true,
  sub_header_web_page: true,
  sub_header_announce: true,
} satisfies Partial<Settings>;
const fromBase64Text = (value: string | null) =>
  value?.startsWith("base64:") ? Buffer.from(value.slice(7), "base64").toString("utf8") : null;

// ---- the pieces -----------------------------------------------------------------------------

describe("profile headers, built from settings", () => {
  const settings = { site_url: SITE, preferDomain: "", ...ANNOUNCEMENT, ...SWITCHES_ON };
  const file = { title: "飞渡", usage: { upload: 0, download: 5, total: 10, expire: 1_798_732_800 } };

  test("all on: title, interval, usage, support page, site, announcement, in this order", () => {
    expect(profileHeaders(settings, file)).toEqual([
      ["profile-title", base64Text("飞渡")],
      ["profile-update-interval", String(UPDATE_INTERVAL_HOURS)],
      ["subscription-userinfo", "upload=0; download=5; total=10; expire=1798732800"],
      ["support-url", `${SITE}/#/feedback`],
      ["profile-web-page-url", `${SITE}/`],
      ["announce", base64Text("维护通知：今晚 2 点维护 约 10 分钟")],
    ]);
    expect(base64Text("飞渡")).toBe("base64:6aOe5rih");
  });

  test("without a site address there is no link to give: no support-url, no profile-web-page-url", () => {
    const names = profileHeaders({ ...settings, site_url: "" }, file).map(([name]) => name);
    expect(names).toEqual(["profile-title", "profile-update-interval", "subscription-userinfo", "announce"]);
    // preferDomain is the site address when site_url is empty (siteOrigin).
    expect(
      profileHeaders({ ...settings, site_url: "", preferDomain: "www.example.net" }, file),
    ).toContainEqual(["support-url", "https://www.example.net/#/feedback"]);
  });

  test("the announcement: only while shown, title and content on one line, at most 200 characters", () => {
    expect(announceText({ ...ANNOUNCEMENT, notice_show: false })).toBeNull();
    expect(announceText({ notice_show: true, notice_title: " ", notice_content: "" })).toBeNull();
    expect(announceText({ notice_show: true, notice_title: "", notice_content: "只有内容" })).toBe(
      "只有内容",
    );
    expect(announceText({ notice_show: true, notice_title: "只有标题", notice_content: "" })).toBe(
      "只有标题",
    );
    const long = announceText({ notice_show: true, notice_title: "", notice_content: "😀长".repeat(150) });
    expect(Array.from(long as string)).toHaveLength(ANNOUNCE_MAX_CHARS);
    expect(long).toEndWith("…");
    expect(long).toStartWith("😀长😀长");
  });

  test("golden: the URI list with the profile lines on top (Happ, Hiddify read them there)", () => {
    const input = fixtureInput("v2ray");
    const lines = headerLines(profileHeaders(settings, { title: input.title, usage: input.usage }));
    const text = Buffer.from(renderV2ray({ ...input, headerLines: lines }).body, "base64");
    expectGolden("v2ray.headers.txt", text.toString("utf8"));
    expect(text.toString("utf8").split("\n").slice(0, lines.length)).toEqual(lines);
  });
});

// ---- through the route ----------------------------------------------------------------------

let server: TestServer;
let user: UserRow;
const ctx = () => server.context;
const VIP_END = Date.now() + 10 * 86_400_000;

beforeAll(async () => {
  server = await startTestServer();
  const agent = await saveNode(server, { name: "香港", ip: "203.0.113.9", host: "hk.example.com" });
  for (const [name, protocol] of [
    ["香港 TCP", "vmesh_tcp"],
    ["香港 SS", "ss"],
  ] as const) {
    await saveLine(ctx(), lineInput.parse({ name, agentID: agent._id, protocol, bridge: "none" }));
  }
  const made = await loggedInClient(server);
  await setUserColumns(ctx().db, made.user.id, { traffic: 10 * GB, vip_expire_time: VIP_END });
  user = made.user;
  await ctx().settings.update({ site_url: SITE, ...ANNOUNCEMENT });
});
afterEach(async () => {
  await ctx().settings.update({ site_url: SITE, preferDomain: "", ...ANNOUNCEMENT, ...SWITCHES_ON });
});
afterAll(async () => {
  await server?.close();
});

const link = (client: string, query = "") =>
  `${server.url}/api/subscript/${client}/${user.id}/${user.userkey}${query}`;
const get = (client: string, headers: Record<string, string> = {}, query = "") =>
  fetch(link(client, query), { headers });
const decode = (body: string) => Buffer.from(body, "base64").toString("utf8");
const EXPIRE = `expire=${Math.floor(VIP_END / 1000)}`;

/** The profile lines at the top of a text: `#key: value` until the first line that is not one. */
function bodyLines(text: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^#([a-z-]+): (.*)$/.exec(line);
    if (!match) break;
    found[match[1] as string] = match[2] as string;
  }
  return found;
}

const EVERY_CLIENT = Object.keys(CLIENT_FORMATS) as Exclude<Client, "auto">[];

describe("every format carries the headers; only the URI list repeats them in the body", () => {
  test.each(EVERY_CLIENT)("%s", async (client) => {
    const response = await get(client);
    expect(response.status).toBe(200);
    const headers = response.headers;
    expect(fromBase64Text(headers.get("profile-title"))).toBe("飞渡");
    expect(headers.get("profile-update-interval")).toBe("24");
    expect(headers.get("subscription-userinfo")).toEndWith(EXPIRE);
    expect(headers.get("support-url")).toBe(`${SITE}/#/feedback`);
    expect(headers.get("profile-web-page-url")).toBe(`${SITE}/`);
    expect(fromBase64Text(headers.get("announce"))).toBe("维护通知：今晚 2 点维护 约 10 分钟");

    const body = await response.text();
    const format = CLIENT_FORMATS[client];
    if (format === "v2ray") {
      expect(bodyLines(decode(body))).toEqual({
        "profile-title": headers.get("profile-title") as string,
        "profile-update-interval": "24",
        "subscription-userinfo": headers.get("subscription-userinfo") as string,
        "support-url": `${SITE}/#/feedback`,
        "profile-web-page-url": `${SITE}/`,
        announce: headers.get("announce") as string,
      });
      return;
    }
    // Every other body is left as its clients parse it: no profile lines anywhere in it.
    const text = /^[A-Za-z0-9+/=]+$/.test(body.trim()) ? decode(body) : body;
    expect(text).not.toContain("#profile-title");
    expect(text).not.toContain("#announce");
    if (headers.get("content-type")?.startsWith("application/json"))
      expect(() => JSON.parse(body)).not.toThrow();
    if (headers.get("content-type")?.startsWith("text/yaml")) expect(parse(body)).toHaveProperty("proxies");
  });
});

describe("switches in 配置管理 and what the settings hold", () => {
  test.each([
    ["sub_header_title", "profile-title"],
    ["sub_header_update_interval", "profile-update-interval"],
    ["sub_header_userinfo", "subscription-userinfo"],
    ["sub_header_support_url", "support-url"],
    ["sub_header_web_page", "profile-web-page-url"],
    ["sub_header_announce", "announce"],
  ] as const)("%s off: no %s header and no body line", async (setting, header) => {
    await ctx().settings.update({ [setting]: false });
    for (const client of ["clash", "singbox", "json", "v2ray"]) {
      const response = await get(client);
      expect({ client, value: response.headers.get(header) }).toEqual({ client, value: null });
      if (client === "v2ray")
        expect(Object.keys(bodyLines(decode(await response.text())))).not.toContain(header);
    }
    // The others stay.
    const names = [...(await get("v2ray")).headers.keys()];
    expect(names).toContain(header === "profile-title" ? "announce" : "profile-title");
  });

  test("sub_header_expire off: expire=0 in the header, the body line and Shadowrocket's STATUS line", async () => {
    expect(decode(await (await get("ss")).text())).not.toContain("Expires:N/A");
    await ctx().settings.update({ sub_header_expire: false });
    const list = await get("v2ray");
    expect(list.headers.get("subscription-userinfo")).toEndWith("expire=0");
    expect(bodyLines(decode(await list.text()))["subscription-userinfo"]).toEndWith("expire=0");
    expect(decode(await (await get("ss")).text())).toStartWith("STATUS=");
    expect(decode(await (await get("ss")).text()).split("\n")[0]).toEndWith("Expires:N/A");
  });

  test("the announcement is sent only while it is shown", async () => {
    await ctx().settings.update({ notice_show: false });
    const hidden = await get("v2ray");
    expect(hidden.headers.get("announce")).toBeNull();
    expect(bodyLines(decode(await hidden.text())).announce).toBeUndefined();
    await ctx().settings.update({ notice_show: true, notice_title: "", notice_content: "新".repeat(300) });
    const shown = fromBase64Text((await get("clash")).headers.get("announce")) as string;
    expect(Array.from(shown)).toHaveLength(ANNOUNCE_MAX_CHARS);
  });

  test("links come from the site address only: never from the Host header the request names", async () => {
    await ctx().settings.update({ site_url: "", preferDomain: "" });
    const response = await get("v2ray", { host: "evil.example.org", "x-forwarded-host": "evil.example.org" });
    expect(response.status).toBe(200);
    expect(response.headers.get("support-url")).toBeNull();
    expect(response.headers.get("profile-web-page-url")).toBeNull();
    expect(decode(await response.text())).not.toContain("evil.example.org/");
    await ctx().settings.update({ preferDomain: "www.example.net" });
    expect((await get("v2ray", { host: "evil.example.org" })).headers.get("support-url")).toBe(
      "https://www.example.net/#/feedback",
    );
  });

  test("a cached answer carries the same headers; a setting saved shows in the next fetch", async () => {
    const first = await get("clash");
    const second = await get("clash");
    expect(Object.fromEntries(second.headers)).toEqual(Object.fromEntries(first.headers));
    expect(await second.text()).toBe(await first.text());
    await ctx().settings.update({ notice_content: "换了内容" });
    expect(fromBase64Text((await get("clash")).headers.get("announce"))).toBe("维护通知：换了内容");
  });
});

// ---- Xray JSON ------------------------------------------------------------------------------

describe("Xray JSON: /api/subscript/json/… and auto for the Xray apps", () => {
  const isXray = async (response: Response) => {
    const body = await response.text();
    if (!response.headers.get("content-type")?.startsWith("application/json")) return false;
    const configs = JSON.parse(body) as { remarks: string; outbounds: { protocol: string }[] }[];
    return Array.isArray(configs) && configs.every((config) => typeof config.remarks === "string");
  };

  test("the json client: an array of complete configs, one a line, named after the lines", async () => {
    const response = await get("json");
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename*=UTF-8''${encodeURIComponent("飞渡.json")}`,
    );
    const body = await response.text();
    const configs = JSON.parse(body) as { remarks: string; outbounds: { tag: string; protocol: string }[] }[];
    expect(configs.map((config) => config.remarks)).toEqual(["香港 TCP [1x]", "香港 SS [1x]"]);
    expect(configs.map((config) => config.outbounds[0])).toMatchObject([
      { tag: "proxy", protocol: "vmess" },
      { tag: "proxy", protocol: "shadowsocks" },
    ]);
    expect(body.split("\n")).toHaveLength(configs.length + 3);
  });

  test.each([
    "Happ/2.0.1/Android/1752412356",
    "Streisand/2.3 CFNetwork/1568.100.1 Darwin/24.0.0",
    "V2Box/9.0 (iPhone; iOS 18.1)",
    "v2rayNG/1.8.29",
    "v2rayNG/1.10.2",
  ])("auto with %s: Xray JSON", async (userAgent) => {
    expect(detectFormat(userAgent)).toBe("xray");
    expect(await isXray(await get("auto", { "user-agent": userAgent }))).toBe(true);
  });

  test.each(["v2rayNG/1.8.28", "v2rayN/7.10.5", "HiddifyNext/2.5.7 (android) like ClashMeta v2ray sing-box"])(
    "auto with %s: not Xray JSON",
    async (userAgent) => {
      expect(detectFormat(userAgent)).not.toBe("xray");
      expect(await isXray(await get("auto", { "user-agent": userAgent }))).toBe(false);
    },
  );

  test("?flag=json asks for it whatever the User-Agent", async () => {
    expect(await isXray(await get("auto", { "user-agent": "curl/8" }, "?flag=json"))).toBe(true);
  });
});
