/**
 * The golden-test fixture: nodes × protocols × bridges, turned into proxies by the production
 * lineProxies. Every key and password here is fake and fixed, so rendered files are stable.
 */

import type { Entry } from "../modules/entry/schema.ts";
import type { Bridge, LineProtocol } from "../modules/line/schema.ts";
import type { SsMethod } from "../modules/node-record/schema.ts";
import { type Format, NO_TOGGLES, type ProfileToggles, type ProxyEntry, type RenderInput } from "./model.ts";
import { type LineSource, lineProxies, noticeProxy, type ProxyAgent, uniqueNames } from "./proxies.ts";
import { supports } from "./support.ts";

export const FIXTURE_UUID = "11111111-2222-3333-4444-555555555555";

function agent(overrides: Partial<ProxyAgent>): ProxyAgent {
  return {
    type: "v2ray",
    ip: "203.0.113.10",
    host: "",
    zz_port: 20000,
    public_port: 10000,
    ss_method: "aes-256-gcm",
    ws_path: "/a1b2c3d4e5f6",
    reality_public_key: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
    reality_short_id: "0123456789abcdef",
    hy2_obfs_password: "obfs-Pa55word",
    ss_server_key: Buffer.alloc(32, 7).toString("base64"),
    ...overrides,
  };
}

const HK = agent({ host: "hk.example.com" });
const JP_SS2022 = agent({ ip: "203.0.113.20", ss_method: "2022-blake3-aes-128-gcm" as SsMethod });
const US_REALITY = agent({
  type: "reality",
  ip: "203.0.113.30",
  host: "www.example.org",
  public_port: 443,
  zz_port: 443,
});
const SG_H2 = agent({ type: "h2", ip: "203.0.113.40", host: "sg.example.com", public_port: 8443 });
const KR_H2_NO_DOMAIN = agent({ type: "h2", ip: "203.0.113.50", public_port: 8443 });

const RELAY: Entry = {
  _id: "0".repeat(24),
  index: 0,
  name: "广州中转",
  ip: "198.51.100.1",
  ipList: ["198.51.100.1", "198.51.100.2"],
  desc: "",
  visible: true,
};

function line(
  name: string,
  protocol: LineProtocol,
  bridge: Bridge,
  options: { num?: number; scale?: number; fixName?: boolean; bridgeAddr?: string } = {},
): LineSource["line"] {
  return {
    name,
    protocol,
    bridge,
    num: options.num ?? 1,
    fix_name: options.fixName ? 1 : 0,
    scale: options.scale ?? 1,
    bridge_addr: options.bridgeAddr ?? "",
  };
}

const SOURCES: LineSource[] = [
  { line: line("香港 TCP", "vmesh_tcp", "none", { num: 2 }), agent: HK, entry: null, country: "HK" },
  { line: line("香港 WS", "vmesh_ws", "none"), agent: HK, entry: null, country: "HK" },
  {
    line: line("香港 CDN", "vmesh_ws", "cf_cdn", { scale: 0.5, bridgeAddr: "cdn.example.net" }),
    agent: HK,
    entry: null,
    country: "HK",
  },
  { line: line("香港中转", "vmesh_ws", "report", { scale: 1.5 }), agent: HK, entry: RELAY, country: "HK" },
  { line: line("香港 SS", "ss", "none"), agent: HK, entry: null, country: "HK" },
  { line: line("香港 SSR", "compat", "report", { fixName: true }), agent: HK, entry: RELAY, country: "HK" },
  { line: line("日本 SS2022", "ss", "none", { scale: 2 }), agent: JP_SS2022, entry: null, country: "JP" },
  { line: line("美国 Reality", "reality", "none"), agent: US_REALITY, entry: null, country: "US" },
  { line: line("美国 Reality 中转", "reality", "report"), agent: US_REALITY, entry: RELAY, country: "US" },
  { line: line("新加坡 Hy2", "h2", "none"), agent: SG_H2, entry: null, country: "SG" },
  { line: line("韩国 Hy2", "h2", "none"), agent: KR_H2_NO_DOMAIN, entry: null, country: "KR" },
];

/** Every fixture proxy, in subscription order, names unique (in English for use_english_node). */
export function fixtureProxies(english = false): ProxyEntry[] {
  return uniqueNames(SOURCES.flatMap((source) => lineProxies(source, { uuid: FIXTURE_UUID }, { english })));
}

export const FIXTURE_PROXIES: ProxyEntry[] = fixtureProxies();

export const FIXTURE_URL =
  "https://sub.example.com/api/subscript/auto/0123456789abcdef01234567/0123456789abcdef0123456789abcdef";

/** What the service hands a renderer for the fixture: only the proxies the format supports. */
export function fixtureInput(format: Format, query = "", toggles: ProfileToggles = NO_TOGGLES): RenderInput {
  return {
    proxies: fixtureProxies(toggles.english).filter((proxy) => supports(format, proxy)),
    notice: null,
    usage: { upload: 0, download: 5 * 1024 ** 3, total: 105 * 1024 ** 3, expire: 1_798_732_800 },
    title: "飞渡",
    url: FIXTURE_URL,
    host: "sub.example.com",
    query: new URLSearchParams(query),
    toggles,
  };
}

/** The notice-only input (a user without traffic). */
export function noticeInput(message: string): RenderInput {
  return { ...fixtureInput("v2ray"), proxies: [noticeProxy(message)], notice: message };
}

/** A Surge-style profile (Surge, Surfboard): `[Section]` → its non-empty lines. */
export function sections(profile: string): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  let current = "";
  for (const line of profile.split("\n")) {
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = header[1] as string;
      result[current] = [];
    } else if (current && line.trim() !== "") result[current]?.push(line);
  }
  return result;
}
