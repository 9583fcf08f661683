/**
 * The two rule files clients fetch from the panel: `/describe/ss_rule.conf` (a Shadowrocket
 * configuration, seed 000 §2 client guides) and `/describe/q.filter` (a Quantumult filter list,
 * seed 000 §7). Mainland sites and private networks go direct; everything else through the proxy.
 */
import { isIP } from "node:net";
import { NO_TOGGLES, type ProfileToggles } from "./model.ts";

/** Mainland sites sent direct by name (rule files, and profiles whose DNS is released). */
export const DIRECT_DOMAINS = [
  "cn",
  "baidu.com",
  "qq.com",
  "weixin.qq.com",
  "taobao.com",
  "tmall.com",
  "alipay.com",
  "jd.com",
  "163.com",
  "126.net",
  "bilibili.com",
  "hdslb.com",
  "zhihu.com",
  "douyin.com",
  "bytedance.com",
  "weibo.com",
  "sina.com.cn",
  "aliyun.com",
  "alicdn.com",
  "mi.com",
  "apple.com.cn",
  "icloud.com.cn",
];

export const PRIVATE_NETWORKS = [
  "10.0.0.0/8",
  "127.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "100.64.0.0/10",
];

export function shadowrocketRules(subscriptionHost: string): string {
  return [
    "[General]",
    "bypass-system = true",
    "skip-proxy = 192.168.0.0/16, 10.0.0.0/8, 172.16.0.0/12, localhost, *.local, captive.apple.com",
    "dns-server = system",
    "ipv6 = false",
    "",
    "[Rule]",
    ...(subscriptionHost ? [`DOMAIN,${subscriptionHost},DIRECT`] : []),
    ...DIRECT_DOMAINS.map((domain) => `DOMAIN-SUFFIX,${domain},DIRECT`),
    ...PRIVATE_NETWORKS.map((cidr) => `IP-CIDR,${cidr},DIRECT`),
    "GEOIP,CN,DIRECT",
    "FINAL,PROXY",
    "",
  ].join("\n");
}

export function quantumultFilter(subscriptionHost: string): string {
  return [
    ...(subscriptionHost ? [`HOST,${subscriptionHost},DIRECT`] : []),
    ...DIRECT_DOMAINS.map((domain) => `HOST-SUFFIX,${domain},DIRECT`),
    ...PRIVATE_NETWORKS.map((cidr) => `IP-CIDR,${cidr},DIRECT`),
    "GEOIP,CN,DIRECT",
    "FINAL,PROXY",
    "",
  ].join("\n");
}

/** The subscription server as a CIDR when it is addressed by IP (then a domain rule never matches), else null. */
export function hostCidr(host: string): string | null {
  const address = host.replace(/^\[(.*)\]$/, "$1");
  const version = isIP(address);
  if (version === 0) return null;
  return `${address}/${version === 4 ? 32 : 128}`;
}

export { TEST_URL } from "./test-url.ts";

/**
 * The DIRECT rules Clash and Surge profiles start with: the subscription server (so updates never
 * ride a dead proxy), private networks, then China. The caller adds its final rule.
 * - abroad (in_foreign): China is not direct; only the server and private networks are.
 * - releaseDns (inXinjiang): nothing is resolved locally to pick a rule: mainland sites go direct
 *   by name, and the GeoIP rule only sees connections made to an IP (`no-resolve`), so every other
 *   name reaches the proxy unresolved and the proxy server resolves it.
 */
export function directRules(host: string, toggles: ProfileToggles = NO_TOGGLES): string[] {
  const cidr = hostCidr(host);
  const server = cidr
    ? `IP-CIDR${cidr.includes(":") ? "6" : ""},${cidr},DIRECT,no-resolve`
    : `DOMAIN,${host},DIRECT`;
  return [
    server,
    ...PRIVATE_NETWORKS.map((network) => `IP-CIDR,${network},DIRECT,no-resolve`),
    ...chinaRules(toggles),
  ];
}

function chinaRules(toggles: ProfileToggles): string[] {
  if (toggles.abroad) return [];
  if (!toggles.releaseDns) return ["GEOIP,CN,DIRECT"];
  return [...DIRECT_DOMAINS.map((domain) => `DOMAIN-SUFFIX,${domain},DIRECT`), "GEOIP,CN,DIRECT,no-resolve"];
}

/**
 * Resolvers written into a profile when DNS is released: plain IPv4 addresses over UDP, so there
 * is no DoH/DoT host name to resolve first. Mainland public resolvers in China, and resolvers
 * outside China for a customer abroad.
 */
export const MAINLAND_DNS = ["223.5.5.5", "119.29.29.29"] as const;
export const FOREIGN_DNS = ["1.1.1.1", "8.8.8.8"] as const;

export const releasedDnsServers = (toggles: ProfileToggles): readonly string[] =>
  toggles.abroad ? FOREIGN_DNS : MAINLAND_DNS;
