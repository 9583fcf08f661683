/**
 * `/metrics` over real HTTP (issue 18 §4): after a known sequence — two orders paid through the
 * sandbox gateway, one node report, refused notifications (a wrong amount, an unknown trade) — the
 * counters say exactly that; the exposition follows the text format; the endpoint is refused
 * without the bearer token once one is set, and off loopback (or through a proxy) when none is.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  createOrder,
  dobuy,
  makeCombo,
  notifySandbox,
  payWithSandbox,
  sandboxTradeNo,
  startShopServer,
} from "../../../tests/commerce.ts";
import { loggedInClient, type TestServer } from "../../../tests/harness.ts";
import { chargeNode, makeChargingNode, noonZone } from "../../../tests/traffic.ts";
import { LOOPBACK_PROXIES, parseTrustedProxies } from "../../rpc/forwarded.ts";
import { SECRET_MASK } from "../settings/schema.ts";
import { metricsAccess } from "./service.ts";

const TOKEN = "scrape-token-0123456789abcdef";
const GB = 1024 ** 3;

let server: TestServer;
let admin: Awaited<ReturnType<typeof loggedInClient>>;

/** Every sample line as `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

function scrape(headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/metrics`, { headers });
}

async function scrapeSamples(): Promise<{ text: string; values: Map<string, number> }> {
  const response = await scrape();
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, values: samples(text) };
}

beforeAll(async () => {
  server = await startShopServer();
  admin = await loggedInClient(server, { role: "admin" });
  const buyer = await loggedInClient(server);
  const combo = await makeCombo(server, { name: "10G", price: 10, traffic: 10 * GB });
  for (let i = 0; i < 2; i++) {
    const order = await createOrder(buyer.client, combo._id);
    await payWithSandbox(server, buyer.client, order._id);
  }
  // A notification for a real trade with the wrong amount (anomaly), and one for no trade at all.
  const order = await createOrder(buyer.client, combo._id);
  const pay = await dobuy(buyer.client, order._id);
  expect((await notifySandbox(server, sandboxTradeNo(pay.data), 1)).status).toBeLessThan(500);
  expect((await notifySandbox(server, "no-such-trade", 1000)).status).toBeLessThan(500);
  const nodeId = await makeChargingNode(server, noonZone());
  const report = await chargeNode(server, nodeId, { [buyer.user.node_uid]: [1000, 4000] }, Date.now());
  expect(report.charged).toBe(5000);
});
afterAll(async () => {
  await server?.close();
});

describe("/metrics counters after a known sequence", () => {
  test("payment notifications by provider and result, and orders credited", async () => {
    const { values } = await scrapeSamples();
    expect(values.get('ferry_payment_notifications_total{provider="sandbox",result="credited"}')).toBe(2);
    expect(values.get('ferry_payment_notifications_total{provider="sandbox",result="anomaly"}')).toBe(1);
    expect(values.get('ferry_payment_notifications_total{provider="sandbox",result="rejected"}')).toBe(1);
    expect(
      values.get('ferry_payment_notifications_total{provider="sandbox",result="duplicate"}'),
    ).toBeUndefined();
    expect(values.get('ferry_orders_credited_total{provider="sandbox"}')).toBe(2);
    // The payment log agrees (it also holds refusals made before markPaid).
    expect(values.get('ferry_payment_log_events{provider="sandbox",result="credited"}')).toBe(2);
  });

  test("node reports applied and the bytes they charged; nodes by status; online users", async () => {
    const { values } = await scrapeSamples();
    expect(values.get('ferry_node_reports_total{result="applied"}')).toBe(1);
    expect(values.get("ferry_traffic_charged_bytes_total")).toBe(5000);
    expect(values.get('ferry_nodes{status="ok"}')).toBe(1);
    expect(values.get('ferry_nodes{status="error"}')).toBe(0);
    expect(values.get('ferry_nodes{status="never"}')).toBe(0);
    expect(values.get("ferry_online_users")).toBe(1);
  });

  test("envelope calls by call and code with a latency histogram", async () => {
    const { values } = await scrapeSamples();
    expect(values.get('ferry_requests_total{call="/api/shop/create_order",code="0"}')).toBe(3);
    expect(values.get('ferry_requests_total{call="/api/shop/dobuy",code="0"}')).toBe(3);
    const count = values.get('ferry_request_duration_seconds_count{call="/api/shop/create_order"}');
    expect(count).toBe(3);
    expect(values.get('ferry_request_duration_seconds_bucket{call="/api/shop/create_order",le="+Inf"}')).toBe(
      3,
    );
    expect(values.get('ferry_request_duration_seconds_sum{call="/api/shop/create_order"}')).toBeGreaterThan(
      0,
    );
    // A refused call is counted under its code.
    await admin.client.call("/api/shop/create_order", { combo_id: "not-an-id" });
    const after = (await scrapeSamples()).values;
    const refused = [...after].filter(([key]) =>
      key.startsWith('ferry_requests_total{call="/api/shop/create_order",code="'),
    );
    expect(refused.filter(([key]) => !key.endsWith('code="0"}')).map(([, value]) => value)).toEqual([1]);
  });

  test("database, WAL, memory and error log gauges are present", async () => {
    const { values } = await scrapeSamples();
    expect(values.get('ferry_database_bytes{file="db"}')).toBeGreaterThan(0);
    expect(values.get('ferry_database_bytes{file="wal"}')).toBeGreaterThanOrEqual(0);
    expect(values.get("process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(values.get("ferry_heap_used_bytes")).toBeGreaterThan(0);
    expect(values.get("ferry_error_log_events")).toBe(0);
  });

  test("the text format: HELP and TYPE before each family, histogram buckets cumulative", async () => {
    const response = await scrape();
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await response.text();
    expect(text.endsWith("\n")).toBe(true);
    for (const [name, type] of [
      ["ferry_requests_total", "counter"],
      ["ferry_request_duration_seconds", "histogram"],
      ["ferry_payment_notifications_total", "counter"],
      ["ferry_nodes", "gauge"],
      ["process_resident_memory_bytes", "gauge"],
    ]) {
      expect(text).toContain(`# HELP ${name} `);
      expect(text).toContain(`# TYPE ${name} ${type}\n`);
    }
    const buckets = text
      .split("\n")
      .filter((line) => line.startsWith('ferry_request_duration_seconds_bucket{call="/api/shop/dobuy",'))
      .map((line) => Number(line.split(" ")[1]));
    expect(buckets.length).toBe(15);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      expect(line).toMatch(
        /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? ([0-9.e+-]+|\+Inf)$/,
      );
    }
  });
});

describe("/metrics access", () => {
  test("with a token set, a scrape without it or with a wrong one gets 401 and no metrics", async () => {
    await server.context.settings.update({ metrics_token: TOKEN });
    try {
      const attempts: Record<string, string>[] = [
        {},
        { authorization: "Bearer wrong-token-0123456789abcdef" },
        { authorization: TOKEN },
      ];
      for (const headers of attempts) {
        const response = await scrape(headers);
        expect(response.status).toBe(401);
        expect(response.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
        expect(await response.text()).not.toContain("ferry_");
      }
      const ok = await scrape({ authorization: `Bearer ${TOKEN}` });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain("ferry_orders_credited_total");
    } finally {
      await server.context.settings.update({ metrics_token: "" });
    }
  });

  test("the token is a secret: config get shows only the mask", async () => {
    await server.context.settings.update({ metrics_token: TOKEN });
    try {
      const answer = await admin.client.call<Record<string, unknown>>("/api/admin/config/get");
      expect(answer.code).toBe(0);
      expect(answer.data.metrics_token).toBe(SECRET_MASK);
      expect(JSON.stringify(answer)).not.toContain(TOKEN);
      const short = await admin.client.call("/api/admin/config/set_config", { metrics_token: "short" });
      expect(short.code).not.toBe(0);
      expect(await server.context.settings.get("metrics_token")).toBe(TOKEN);
    } finally {
      await server.context.settings.update({ metrics_token: "" });
    }
  });

  test("without a token, a request through a proxy gets 404 even from loopback", async () => {
    const response = await scrape({ "x-forwarded-for": "203.0.113.7" });
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain("ferry_");
  });

  test("without a token, a client a trusted proxy forwards from elsewhere gets 404", async () => {
    const trusted = server.context.trustedProxies;
    server.context.trustedProxies = parseTrustedProxies(LOOPBACK_PROXIES);
    try {
      const response = await scrape({ "x-forwarded-for": "203.0.113.7" });
      expect(response.status).toBe(404);
      // Whatever came through a proxy needs the token, even a client on the proxy's machine.
      const local = await scrape({ "x-forwarded-for": "127.0.0.1" });
      expect(local.status).toBe(404);
    } finally {
      server.context.trustedProxies = trusted;
    }
  });

  test("without a token, every kind of proxy header gets 404 from loopback (issue 26, C9)", async () => {
    const headers: Record<string, string> = {
      "x-forwarded-for": "203.0.113.7",
      "x-forwarded-host": "panel.example.com",
      "x-forwarded-proto": "https",
      "x-forwarded-port": "443",
      "x-forwarded-server": "edge",
      forwarded: "for=203.0.113.7",
      "x-real-ip": "203.0.113.7",
      via: "1.1 nginx",
      "cf-connecting-ip": "203.0.113.7",
      "cf-ray": "8f1a2b3c4d5e6f70-SJC",
      "cf-ipcountry": "CN",
      "true-client-ip": "203.0.113.7",
      "x-client-ip": "203.0.113.7",
      "x-cluster-client-ip": "203.0.113.7",
      "fastly-client-ip": "203.0.113.7",
      "client-ip": "203.0.113.7",
      "x-originating-ip": "203.0.113.7",
      "x-remote-addr": "203.0.113.7",
      "x-original-forwarded-for": "203.0.113.7",
      "x-envoy-external-address": "203.0.113.7",
      "x-azure-clientip": "203.0.113.7",
      "akamai-origin-hop": "1",
      "x-amz-cf-id": "abc",
      "cdn-loop": "cloudflare",
    };
    const served: string[] = [];
    for (const [name, value] of Object.entries(headers)) {
      const response = await scrape({ [name]: value });
      const text = await response.text();
      if (response.status !== 404 || text.includes("ferry_")) served.push(`${name} → ${response.status}`);
    }
    expect(served).toEqual([]);
    // And without any, the local scraper is still served.
    expect((await scrape({ "user-agent": "Prometheus/3.0", accept: "text/plain" })).status).toBe(200);
  });

  test("without a token, a server with trust-proxy on answers no one: the token is required", async () => {
    const trusted = server.context.trustedProxies;
    server.context.trustedProxies = parseTrustedProxies("10.0.0.5");
    try {
      // A proxy that adds no header at all makes every visitor a loopback peer without one.
      const bare = await scrape();
      expect(bare.status).toBe(404);
      expect(await bare.text()).not.toContain("ferry_");
      await server.context.settings.update({ metrics_token: TOKEN });
      expect((await scrape({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    } finally {
      server.context.trustedProxies = trusted;
      await server.context.settings.update({ metrics_token: "" });
    }
  });

  test("the rule: loopback peers only without a token; the bearer token from anywhere with one", () => {
    const none = new Headers();
    const direct = (ip: string, headers = none) => metricsAccess("", { ip, headers, behindProxy: false });
    expect(direct("127.0.0.1")).toBe("allowed");
    expect(direct("127.0.0.53")).toBe("allowed");
    expect(direct("::1")).toBe("allowed");
    expect(direct("::ffff:127.0.0.1")).toBe("allowed");
    expect(direct("203.0.113.7")).toBe("hidden");
    expect(direct("10.0.0.2")).toBe("hidden");
    expect(direct("")).toBe("hidden");
    expect(direct("127.0.0.1", new Headers({ forwarded: "for=1.2.3.4" }))).toBe("hidden");
    expect(direct("127.0.0.1", new Headers({ "X-Custom-Client-IP": "1.2.3.4" }))).toBe("hidden");
    expect(metricsAccess("", { ip: "127.0.0.1", headers: none, behindProxy: true })).toBe("hidden");
    const bearer = new Headers({ authorization: `Bearer ${TOKEN}` });
    expect(metricsAccess(TOKEN, { ip: "203.0.113.7", headers: bearer, behindProxy: true })).toBe("allowed");
    expect(metricsAccess(TOKEN, { ip: "127.0.0.1", headers: none, behindProxy: false })).toBe("unauthorized");
    expect(
      metricsAccess(TOKEN, {
        ip: "127.0.0.1",
        headers: new Headers({ authorization: "Bearer " }),
        behindProxy: false,
      }),
    ).toBe("unauthorized");
  });
});
