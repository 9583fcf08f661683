/**
 * `bun scripts/bench/order-list.ts`: p50 / p99 of `/api/order/order_list` for a customer with a
 * long order history (issue 31 §5): the whole list in one answer (what 订单记录 asked for before,
 * and what a call without `page` still gets, at most 1 000 orders) against the first page of 20
 * (what 订单记录 asks for now). In-process server on a temp SQLite file (or a scratch PostgreSQL
 * database with `--database-url <cluster URL>`), over HTTP on 127.0.0.1, one call at a time,
 * the two kinds alternated. Nothing is asserted on time.
 *
 * Usage: bun scripts/bench/order-list.ts [--orders 1000] [--calls 200] [--database-url <url>]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GB } from "../../src/lib/traffic.ts";
import { toBase64Json } from "../../src/rpc/envelope.ts";
import { startServer } from "../../src/server.ts";
import { copyOrders, createOrder, makeCombo } from "../../tests/commerce.ts";
import { loggedInClient, type TestServer } from "../../tests/harness.ts";
import { createDatabase, numberFlag } from "./common.ts";

const argv = process.argv.slice(2);
const urlIndex = argv.indexOf("--database-url");
const options = {
  orders: numberFlag(argv, "orders", 1000),
  calls: numberFlag(argv, "calls", 200),
  clusterUrl: urlIndex >= 0 ? argv[urlIndex + 1] : undefined,
};

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(
    (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0).toFixed(2),
  );
}

const dataDir = mkdtempSync(join(tmpdir(), "ferry-order-list-"));
const scratch = options.clusterUrl
  ? await createDatabase(options.clusterUrl, `bench_order_list_${process.pid}`)
  : null;
const running = await startServer({
  dataDir,
  databaseUrl: scratch?.url,
  host: "127.0.0.1",
  port: 0,
  rateLimitScale: 1000,
});
try {
  const server = { ...running, dataDir, close: async () => {} } as TestServer;
  await server.context.settings.update({ sandbox_pay: true, alipay: "sandbox" });
  const combo = await makeCombo(server, { name: "流量套餐 100G", price: 15, traffic: 100 * GB });
  const { client } = await loggedInClient(server);
  await copyOrders(server, (await createOrder(client, combo._id))._id, options.orders - 1, [
    "paied",
    "cancled",
  ]);
  const kinds = {
    whole: {},
    firstPage: { page: 1, pageSize: 20, filter: "all" },
  } as const;
  const times: Record<keyof typeof kinds, number[]> = { whole: [], firstPage: [] };
  const bytes: Record<keyof typeof kinds, number> = { whole: 0, firstPage: 0 };
  for (let i = 0; i < options.calls + 10; i++) {
    for (const kind of Object.keys(kinds) as (keyof typeof kinds)[]) {
      const started = performance.now();
      const response = await client.raw(
        "/api/order/order_list",
        JSON.stringify({ data: toBase64Json(kinds[kind]) }),
      );
      const text = await response.text();
      if (response.status !== 200) throw new Error(`order_list: HTTP ${response.status}`);
      if (i >= 10) times[kind].push(performance.now() - started); // the first 10 warm up
      bytes[kind] = Buffer.byteLength(text);
    }
  }
  console.log(
    JSON.stringify({
      engine: scratch ? "postgres" : "sqlite",
      orders: options.orders,
      calls: options.calls,
      whole: { p50: percentile(times.whole, 50), p99: percentile(times.whole, 99), bytes: bytes.whole },
      firstPage: {
        p50: percentile(times.firstPage, 50),
        p99: percentile(times.firstPage, 99),
        bytes: bytes.firstPage,
      },
    }),
  );
} finally {
  await running.stop();
  await scratch?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
