/**
 * The two rule files clients fetch from the panel: `/describe/ss_rule.conf` (a Shadowrocket
 * configuration, seed 000 §2 client guides) and `/describe/q.filter` (a Quantumult filter list,
 * seed 000 §7). Mainland sites and private networks go direct; everything else through the proxy.
 */
import { isIP } from "node:net";

const DIRECT_DOMAINS = [
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

/** The connectivity check url-test groups probe (the guides' standard 204 URL). */
export const TEST_URL = "http://www.gstatic.com/generate_204";

/**
 * The DIRECT rules Clash and Surge profiles start with: the subscription server (so updates never
 * ride a dead proxy), private networks, then China. The caller adds its final rule.
 */
export function directRules(host: string): string[] {
  const cidr = hostCidr(host);
  const server = cidr
    ? `IP-CIDR${cidr.includes(":") ? "6" : ""},${cidr},DIRECT,no-resolve`
    : `DOMAIN,${host},DIRECT`;
  return [
    server,
    ...PRIVATE_NETWORKS.map((network) => `IP-CIDR,${network},DIRECT,no-resolve`),
    "GEOIP,CN,DIRECT",
  ];
}
