/**
 * sing-box by version (issue 29): the core a client runs, read from real User-Agents and from
 * `?version=`, and the subscription route answering each client in its core's dialect, one
 * client's cached file never served to another.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loggedInClient, setUserColumns, startTestServer, type TestServer } from "../../tests/harness.ts";
import { saveNode } from "../../tests/nodes.ts";
import { GB } from "../lib/traffic.ts";
import { lineInput } from "../modules/line/schema.ts";
import { saveLine } from "../modules/line/service.ts";
import {
  coreVersionFromUserAgent,
  DEFAULT_SINGBOX_DIALECT,
  INVALID_VERSION_MESSAGE,
  parseVersionParam,
  type SingboxDialect,
  singboxDialectFor,
} from "./singbox-version.ts";

/**
 * User-Agents as the clients send them: the official apps' documented form
 * `SFA/$version ($version_code; sing-box $sing_box_version)` (SagerNet/sing-box
 * docs/clients/{android,apple}), Hiddify's `HiddifyNext/$version ($os) like ClashMeta v2ray sing-box`
 * (hiddify-app lib/core/model/app_info_entity.dart), Karing's as seen by panels.
 */
const USER_AGENTS: [userAgent: string, dialect: SingboxDialect][] = [
  ["SFA/1.11.4 (441; sing-box 1.11.4)", "1.11"],
  ["SFI/1.11.4 (441; sing-box 1.11.4; language zh_CN)", "1.11"],
  ["SFM/1.12.8 (512; sing-box 1.12.8)", "1.12"],
  ["SFT/1.10.7 (107; sing-box 1.10.7)", "1.10"],
  ["SFA/1.13.0-beta.5 (1305; sing-box 1.13.0-beta.5)", "1.12"],
  ["SFI/1.13.15 (sing-box 1.13.15)", "1.12"],
  ["SFA/1.14.0-alpha.13 (1400; sing-box 1.14.0-alpha.13)", "1.12"],
  ["SFI/1.9.7 (197; sing-box 1.9.7)", "1.10"],
  ["SFA/1.11.0", "1.11"],
  ["HiddifyNext/2.5.7 (android) like ClashMeta v2ray sing-box", "1.10"],
  ["HiddifyNext/2.0", "1.10"],
  ["HiddifyNext/4.0.5 (android) like ClashMeta v2ray sing-box", "1.12"],
  ["HiddifyNext/4.1.1 (ios) like ClashMeta v2ray sing-box", "1.12"],
  ["Karing/1.2.24; sing-box 1.13.19", "1.12"],
  ["sing-box/1.12.0", "1.12"],
  ["sing-box 1.11.3", "1.11"],
  // No version of the core: the default.
  ["karing/1.2.18.2102 ios", DEFAULT_SINGBOX_DIALECT],
  ["Karing/1.2.22.2502 Android", DEFAULT_SINGBOX_DIALECT],
  ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15", DEFAULT_SINGBOX_DIALECT],
  ["", DEFAULT_SINGBOX_DIALECT],
];

describe("the core a client runs", () => {
  test.each(USER_AGENTS)("%p → %s", (userAgent, dialect) => {
    expect(singboxDialectFor(userAgent, null)).toBe(dialect);
  });

  test("the sing-box part of the UA is the core; without it, the official app's own version", () => {
    expect(coreVersionFromUserAgent("SFI/1.11.4 (441; sing-box 1.11.4)")).toEqual({ major: 1, minor: 11 });
    expect(coreVersionFromUserAgent("SFA/1.12.1")).toEqual({ major: 1, minor: 12 });
    expect(coreVersionFromUserAgent("HiddifyNext/2.5.7 (android) like ClashMeta v2ray sing-box")).toEqual({
      major: 1,
      minor: 8,
    });
    expect(coreVersionFromUserAgent("HiddifyNext/4.1.1 (android) like ClashMeta v2ray sing-box")).toEqual({
      major: 1,
      minor: 13,
    });
    expect(coreVersionFromUserAgent("Karing/1.2.22.2502 Android")).toBeNull();
    expect(coreVersionFromUserAgent("v2rayN/7.0.0")).toBeNull();
  });

  test("the default is the current dialect", () => {
    expect(DEFAULT_SINGBOX_DIALECT).toBe("1.12");
  });
});

describe("?version=", () => {
  test.each([
    ["1.11", "1.11"],
    ["1.11.4", "1.11"],
    ["v1.12.0-beta.3", "1.12"],
    ["1.13", "1.12"],
    ["1.14.2", "1.12"],
    ["2.0", "1.12"],
    ["1.10", "1.10"],
    ["1.8.9", "1.10"],
  ] as const)("%p → %s, whatever the User-Agent says", (value, dialect) => {
    expect(singboxDialectFor("SFI/1.12.4 (1; sing-box 1.12.4)", value)).toBe(dialect);
    expect(singboxDialectFor("", value)).toBe(dialect);
  });

  test.each([
    "",
    "abc",
    "1",
    "1.x",
    "1.11.4.5",
    "1.11;drop",
    "1111.1",
    "1.11 sing-box",
    "<script>",
    "１.１１",
  ])("junk %p is refused, not guessed at", (value) => {
    expect(parseVersionParam(value)).toBeNull();
    expect(singboxDialectFor("SFI/1.11.4 (441; sing-box 1.11.4)", value)).toBe("invalid");
  });
});

describe("GET /api/subscript/… per client version", () => {
  let server: TestServer;
  let link: (client: string, query?: string) => string;

  beforeAll(async () => {
    server = await startTestServer();
    const node = await saveNode(server, { name: "香港", ip: "203.0.113.9", host: "hk.example.com" });
    await saveLine(
      server.context,
      lineInput.parse({ name: "香港 TCP", agentID: node._id, protocol: "vmesh_tcp", bridge: "none" }),
    );
    const { user } = await loggedInClient(server);
    await setUserColumns(server.context.db, user.id, { traffic: 10 * GB });
    link = (client, query = "") => `${server.url}/api/subscript/${client}/${user.id}/${user.userkey}${query}`;
  });
  afterAll(async () => {
    await server?.close();
  });

  interface Fetched {
    status: number;
    contentType: string | null;
    config: {
      dns: { servers: Record<string, unknown>[] };
      outbounds: { type: string; tag: string }[];
      route: Record<string, unknown>;
    };
  }

  async function fetchAs(url: string, userAgent: string): Promise<Fetched> {
    const response = await fetch(url, { headers: { "user-agent": userAgent } });
    return {
      status: response.status,
      contentType: response.headers.get("content-type"),
      config: JSON.parse(await response.text()),
    };
  }

  /** What tells the dialects apart in a body, as a client's core would meet it. */
  function dialectOfBody({ config }: Fetched): SingboxDialect {
    if (config.outbounds.some((outbound) => outbound.type === "dns")) return "1.10";
    if (config.dns.servers.every((server) => "address" in server)) return "1.11";
    expect(config.dns.servers.every((server) => "type" in server)).toBe(true);
    expect(config.route.default_domain_resolver).toBe("local");
    return "1.12";
  }

  const SFI_111 = "SFI/1.11.4 (441; sing-box 1.11.4; language zh_CN)";
  const SFA_112 = "SFA/1.12.8 (512; sing-box 1.12.8)";
  const HIDDIFY_2 = "HiddifyNext/2.5.7 (android) like ClashMeta v2ray sing-box";
  const SFM_113 = "SFM/1.13.2 (1302; sing-box 1.13.2)";

  test("one URL, clients of different versions in turn: each gets its own dialect, never another's cached file", async () => {
    const url = link("singbox");
    const order = [SFI_111, SFA_112, HIDDIFY_2, SFM_113, SFI_111, HIDDIFY_2, SFA_112];
    const seen = [];
    for (const userAgent of order) {
      const fetched = await fetchAs(url, userAgent);
      expect(fetched.status).toBe(200);
      expect(fetched.contentType).toBe("application/json; charset=utf-8");
      seen.push(dialectOfBody(fetched));
    }
    expect(seen).toEqual(["1.11", "1.12", "1.10", "1.12", "1.11", "1.10", "1.12"]);
  });

  test("auto picks sing-box by the User-Agent and its dialect by the version in it", async () => {
    expect(dialectOfBody(await fetchAs(link("auto"), SFI_111))).toBe("1.11");
    expect(dialectOfBody(await fetchAs(link("auto"), HIDDIFY_2))).toBe("1.10");
    expect(dialectOfBody(await fetchAs(link("auto"), SFA_112))).toBe("1.12");
    expect(dialectOfBody(await fetchAs(link("auto"), "Karing/1.2.22.2502 Android"))).toBe("1.12");
  });

  test("?version= picks the dialect for a client that does not say it, and beats one that does", async () => {
    expect(dialectOfBody(await fetchAs(link("singbox", "?version=1.11"), "curl/8.5.0"))).toBe("1.11");
    expect(dialectOfBody(await fetchAs(link("singbox", "?version=1.10"), SFA_112))).toBe("1.10");
    expect(dialectOfBody(await fetchAs(link("singbox"), "curl/8.5.0"))).toBe("1.12");
  });

  test("a ?version= that is no version gets 400 and says why; other formats ignore the parameter", async () => {
    for (const query of ["?version=abc", "?version=", "?version=1.x"]) {
      const response = await fetch(link("singbox", query), { headers: { "user-agent": SFI_111 } });
      expect({ query, status: response.status, body: await response.text() }).toEqual({
        query,
        status: 400,
        body: `${INVALID_VERSION_MESSAGE}\n`,
      });
    }
    const v2ray = await fetch(link("v2ray", "?version=abc"));
    expect(v2ray.status).toBe(200);
    // The URI list starts with the profile's `#key: value` lines; its first link follows them.
    const links = Buffer.from(await v2ray.text(), "base64")
      .toString()
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"));
    expect(links[0]).toStartWith("vmess://");
  });
});
