/**
 * Panel lines → proxies (DESIGN §7, subscription-formats.md §1): one proxy per line copy and
 * entry address. Relays supply only the address and port; everything that identifies the node
 * (credentials, SNI, WebSocket Host and path, Reality keys) stays the node's own.
 */

import type { Entry } from "../modules/entry/schema.ts";
import { entryAddresses } from "../modules/entry/schema.ts";
import { PORT_OFFSET, PROTOCOLS_BY_NODE_TYPE } from "../modules/line/schema.ts";
import type { LineRow } from "../modules/line/service.ts";
import { isSs2022, type SsMethod } from "../modules/node-record/schema.ts";
import { type AgentRow, ssServerKey } from "../modules/node-record/service.ts";
import { englishName } from "./english-names.ts";
import type { ProxyEntry, ShadowsocksProxy } from "./model.ts";

/** The node columns a proxy is made from (no API token, no private key). */
export const PROXY_AGENT_COLUMNS = [
  "type",
  "ip",
  "host",
  "zz_port",
  "public_port",
  "ss_method",
  "ws_path",
  "reality_public_key",
  "reality_short_id",
  "hy2_obfs_password",
  "ss_server_key",
] as const;
export type ProxyAgent = Pick<AgentRow, (typeof PROXY_AGENT_COLUMNS)[number]>;

export interface LineSource {
  line: Pick<LineRow, "name" | "protocol" | "bridge" | "num" | "fix_name" | "scale" | "bridge_addr">;
  agent: ProxyAgent;
  /** The relay entry for bridge report; null otherwise (or when it was deleted). */
  entry: Entry | null;
  /** The node's ISO country code ("" or absent when unset): English names start from it. */
  country?: string;
}

export interface NameOptions {
  /** use_english_node: the line name in English (english-names.ts). */
  english?: boolean;
}

/** A user's proxy credential: the UUID that changes with the userkey (DESIGN §7). */
export interface Credentials {
  uuid: string;
}

/**
 * A user's own SS key: the UUID for classic AEAD; for 2022 methods the user key as Xboard derives
 * it, base64 of the first N characters of the UUID. Node configs use it for each client.
 */
export function ssUserKey(method: SsMethod, uuid: string): string {
  if (!isSs2022(method)) return uuid;
  const size = method === "2022-blake3-aes-128-gcm" ? 16 : 32;
  return Buffer.from(uuid.slice(0, size)).toString("base64");
}

/** The password a client is given: the user key, behind the node's server key for 2022 methods. */
function ssPassword(agent: Pick<ProxyAgent, "ss_method" | "ss_server_key">, uuid: string): string {
  const userKey = ssUserKey(agent.ss_method, uuid);
  return isSs2022(agent.ss_method) ? `${ssServerKey(agent)}:${userKey}` : userKey;
}

/** Where clients dial: the node itself, each entry address, or the CDN. */
function endpoints(source: LineSource): { server: string; port: number }[] {
  const { line, agent, entry } = source;
  const offset = PORT_OFFSET[line.protocol];
  if (line.bridge === "cf_cdn") return [{ server: line.bridge_addr || agent.host || agent.ip, port: 443 }];
  if (line.bridge === "report") {
    if (!entry?.visible) return [];
    return entryAddresses(entry).map((server) => ({ server, port: agent.zz_port + offset }));
  }
  return [{ server: agent.ip, port: agent.public_port + offset }];
}

/** "香港 02-3 [1.5x]": copy number unless the name is fixed, address number when relayed to several. */
function proxyName(
  source: LineSource,
  copy: number,
  address: number,
  addressCount: number,
  options: NameOptions,
): string {
  const { line } = source;
  const base = options.english ? englishName(line.name, source.country ?? "") : line.name;
  let name = base.replace(/[,=]/g, " ").trim();
  if (line.num > 1 && !line.fix_name) name += ` ${String(copy).padStart(2, "0")}`;
  if (addressCount > 1) name += `-${address}`;
  return `${name} [${Number(line.scale.toFixed(2))}x]`;
}

function proxyFor(
  source: LineSource,
  credentials: Credentials,
  name: string,
  server: string,
  port: number,
): ProxyEntry {
  const { line, agent } = source;
  const base = { name, server, port, line: line.protocol };
  switch (line.protocol) {
    case "vmesh_tcp":
      return {
        ...base,
        type: "vmess",
        uuid: credentials.uuid,
        network: "tcp",
        wsPath: "",
        wsHost: "",
        tls: false,
        sni: "",
      };
    case "vmesh_ws": {
      const tls = line.bridge === "cf_cdn";
      const host = agent.host || agent.ip;
      return {
        ...base,
        type: "vmess",
        uuid: credentials.uuid,
        network: "ws",
        wsPath: agent.ws_path,
        wsHost: host,
        tls,
        sni: tls ? host : "",
      };
    }
    case "ss":
    case "compat":
      return {
        ...base,
        type: "ss",
        method: agent.ss_method,
        password: ssPassword(agent, credentials.uuid),
        ssr: line.protocol === "compat",
      } satisfies ShadowsocksProxy;
    case "reality":
      return {
        ...base,
        type: "vless",
        uuid: credentials.uuid,
        flow: "xtls-rprx-vision",
        sni: agent.host,
        publicKey: agent.reality_public_key,
        shortId: agent.reality_short_id,
        fingerprint: "chrome",
      };
    case "h2":
      return {
        ...base,
        type: "hysteria2",
        password: credentials.uuid,
        sni: agent.host,
        insecure: agent.host === "",
        obfsPassword: agent.hy2_obfs_password,
      };
  }
}

export function lineProxies(
  source: LineSource,
  credentials: Credentials,
  options: NameOptions = {},
): ProxyEntry[] {
  // A node whose type changed after the line was made cannot serve it.
  if (!PROTOCOLS_BY_NODE_TYPE[source.agent.type].includes(source.line.protocol)) return [];
  const targets = endpoints(source);
  const proxies: ProxyEntry[] = [];
  for (let copy = 1; copy <= source.line.num; copy++) {
    targets.forEach((target, index) => {
      const name = proxyName(source, copy, index + 1, targets.length, options);
      proxies.push(proxyFor(source, credentials, name, target.server, target.port));
    });
  }
  return proxies;
}

/** Clash, sing-box and friends need unique names: the second "A" becomes "A (2)". */
export function uniqueNames(proxies: ProxyEntry[]): ProxyEntry[] {
  const seen = new Map<string, number>();
  const taken = new Set(proxies.map((proxy) => proxy.name));
  return proxies.map((proxy) => {
    const count = (seen.get(proxy.name) ?? 0) + 1;
    seen.set(proxy.name, count);
    if (count === 1) return proxy;
    let n = count;
    while (taken.has(`${proxy.name} (${n})`)) n++;
    const name = `${proxy.name} (${n})`;
    taken.add(name);
    return { ...proxy, name };
  });
}

/** The one entry a file holds when there is nothing to use: its name tells the user why. */
export function noticeProxy(message: string): ShadowsocksProxy {
  return {
    name: message,
    server: "127.0.0.1",
    port: 1,
    line: "compat",
    type: "ss",
    method: "aes-256-gcm",
    password: "0",
    ssr: true,
  };
}
