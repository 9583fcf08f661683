/**
 * `ferry db copy` (issue 27 item 5) on a real PostgreSQL: a SQLite install with customers, paid
 * orders, wallet money and traffic moves to PostgreSQL and back to a new SQLite file with the same
 * rows and ledger sums. Runs only when FERRY_TEST_DATABASE_URL names a cluster (`bun run test`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectOneLineError, ferry } from "../../cli/test-helpers.ts";
import { GB } from "../../src/lib/traffic.ts";
import { createOrder, giveWallet, makeCombo, payWithSandbox } from "../../tests/commerce.ts";
import { loggedInClient, type TestServer } from "../../tests/harness.ts";
import { createTestDatabase, type TestDatabase, testClusterUrl } from "../../tests/pg.ts";
import { recordTraffic } from "../../tests/traffic.ts";
import { openSqlite } from "../db/db.ts";
import { migrations } from "../embedded.ts";
import { startServer } from "../server.ts";
import { CopyRefused, copyDatabase, ledgerSums, openEndpoint, parseEndpoint } from "./db-copy.ts";

/** A shop on SQLite (never PostgreSQL, whatever the suite runs on): the install to move. */
async function startSqliteShop(dataDir: string): Promise<TestServer> {
  const server = await startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    rateLimitScale: 1000,
    allowPrivateUrls: true,
  });
  await server.context.settings.update({
    site_url: server.url,
    sandbox_pay: true,
    alipay: "sandbox",
    wxpay: "sandbox",
  });
  return { ...server, dataDir, close: () => server.stop() };
}

/** Customers who paid for packages through the sandbox, hold wallet money and used traffic. */
async function fillShop(server: TestServer): Promise<void> {
  const combos = [
    await makeCombo(server, { name: "10G", price: 15, traffic: 10 * GB }),
    await makeCombo(server, { name: "三十天", price: 25, vipDuration: 30 }),
  ];
  for (let i = 0; i < 4; i++) {
    const { user, client } = await loggedInClient(server);
    await giveWallet(server, user.id, 1_000 * (i + 1));
    for (const combo of combos)
      await payWithSandbox(server, client, (await createOrder(client, combo._id))._id);
    await createOrder(client, (combos[0] as { _id: string })._id);
    await recordTraffic(server, user.id, "spend", -(i + 1) * 100_000_000);
  }
}

describe.skipIf(!testClusterUrl())("ferry db copy on PostgreSQL", () => {
  const dir = mkdtempSync(join(tmpdir(), "ferry-db-copy-"));
  const dataDir = join(dir, "data");
  let target: TestDatabase;

  beforeAll(async () => {
    const server = await startSqliteShop(dataDir);
    try {
      await fillShop(server);
    } finally {
      await server.close();
    }
    target = (await createTestDatabase()) as TestDatabase;
  });
  afterAll(async () => {
    await target?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("SQLite → PostgreSQL → a new SQLite file keeps every row and every ledger sum", async () => {
    const original = openSqlite(join(dataDir, "ferry.db"));
    const before = await ledgerSums(original);
    const counts = async (db: typeof original) =>
      await db.all<{ t: string; n: number }>(
        "SELECT 'orders' AS t, COUNT(*) AS n FROM orders UNION ALL SELECT 'paid', COUNT(*) FROM orders WHERE status = 'paied' " +
          "UNION ALL SELECT 'traffic_records', COUNT(*) FROM traffic_records UNION ALL SELECT 'wallet_entries', COUNT(*) FROM wallet_entries",
      );
    const originalCounts = await counts(original);
    await original.close();
    // The data is what it should be: paid orders, traffic and wallet ledgers, balances equal to them.
    expect(originalCounts).toEqual([
      { t: "orders", n: 12 },
      { t: "paid", n: 8 },
      { t: "traffic_records", n: 12 },
      { t: "wallet_entries", n: 4 },
    ]);
    expect(before.totals.trafficLedger).toBe(40 * GB - 1_000_000_000);
    expect(before.totals.walletLedger).toBe(10_000);
    expect(before.totals.vipLedger).toBeGreaterThan(0);

    const source = await openEndpoint(parseEndpoint(dataDir), "source");
    const pg = await openEndpoint(parseEndpoint(target.url), "target");
    const there = await copyDatabase(source, pg, { migrations, batchRows: 5 });
    await source.close();
    expect(there.comparison.accountDifferences).toEqual([]);
    expect(there.comparison.counts.filter((row) => row.source !== row.target)).toEqual([]);
    expect(there.comparison.equal).toBe(true);
    // Identity columns continue after the copied ids.
    const next = await pg.get<{ id: number }>(
      "INSERT INTO wallet_entries (user_id, type, change_fen, balance_fen, \"desc\", create_time) SELECT user_id, type, 0, balance_fen, 'after the copy', 1 FROM wallet_entries WHERE id = 4 RETURNING id",
    );
    expect(next?.id).toBe(5);
    await pg.run("DELETE FROM wallet_entries WHERE id = 5");
    // So do the node numbers of users (a sequence on PostgreSQL, set past the copied ones).
    const highest = await pg.get<{ n: number }>("SELECT MAX(node_uid) AS n FROM users");
    const made = await pg.get<{ node_uid: number }>(
      "INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time) VALUES ('after-copy', 'after-copy@example.com', 'x', 'k-after', 's-after', 1) RETURNING node_uid",
    );
    expect(made?.node_uid).toBe((highest?.n ?? 0) + 1);
    await pg.run("DELETE FROM users WHERE id = 'after-copy'");

    const backFile = join(dir, "back", "ferry.db");
    const back = await openEndpoint(parseEndpoint(`sqlite:${backFile}`), "target");
    const returned = await copyDatabase(pg, back, { migrations });
    await pg.close();
    expect(returned.comparison.accountDifferences).toEqual([]);
    expect(returned.comparison.equal).toBe(true);
    const after = await ledgerSums(back);
    expect(await counts(back as typeof original)).toEqual(originalCounts);
    expect(after.totals).toEqual(before.totals);
    const byId = (sums: typeof before) => [...sums.accounts].sort(([a], [b]) => a.localeCompare(b));
    expect(byId(after)).toEqual(byId(before));
    await back.close();
  }, 60_000);

  test("refuses a target that holds rows, and a SQLite file a running server holds", async () => {
    // The database of the previous test holds the copy; the CLI says so in one line.
    const refused = await ferry(["db", "copy", "--from", dataDir, "--to", target.url]);
    expectOneLineError(refused, /target is not empty \(rows in .*users/);
    expect(refused.stdout).toBe("");

    const serving = await startSqliteShop(dataDir);
    try {
      const empty = (await createTestDatabase()) as TestDatabase;
      try {
        await expect(openEndpoint(parseEndpoint(dataDir), "source")).rejects.toThrow(CopyRefused);
        await expect(openEndpoint(parseEndpoint(dataDir), "source")).rejects.toThrow(/is running on/);
      } finally {
        await empty.drop();
      }
    } finally {
      await serving.close();
    }
  }, 60_000);
});
