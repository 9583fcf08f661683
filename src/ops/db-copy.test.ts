/**
 * `ferry db copy` (issue 27 item 5) on a real PostgreSQL: a SQLite install with customers, paid
 * orders, wallet money, traffic and uploaded images moves to PostgreSQL and back to a new SQLite
 * file with the same rows and ledger sums, and a server on each copy serves every image byte for
 * byte (issue 28: the bytes are in upload_blobs; an upload older than them, a file in
 * <data>/uploads, joins them on the way). Runs only when FERRY_TEST_DATABASE_URL names a cluster
 * (`bun run test`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expectOneLineError, ferry } from "../../cli/test-helpers.ts";
import { GB } from "../../src/lib/traffic.ts";
import { createOrder, giveWallet, makeCombo, payWithSandbox } from "../../tests/commerce.ts";
import { loggedInClient, type TestServer } from "../../tests/harness.ts";
import { createTestDatabase, type TestDatabase, testClusterUrl } from "../../tests/pg.ts";
import { recordTraffic } from "../../tests/traffic.ts";
import { downloadImage, uploadImage } from "../../tests/uploads.ts";
import { type Db, openSqlite } from "../db/db.ts";
import { migrations } from "../embedded.ts";
import { everyBytePng, JPEG, quadrantPng } from "../modules/file/test-images.ts";
import { randomHex } from "../rpc/ids.ts";
import { startServer } from "../server.ts";
import {
  CopyRefused,
  copyDatabase,
  formatComparison,
  ledgerSums,
  legacyUploadsDir,
  openEndpoint,
  parseEndpoint,
} from "./db-copy.ts";

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

/** Images each copy must serve: name → bytes. */
const images = new Map<string, Buffer>();

/**
 * Images uploaded through the route (bytes in upload_blobs), and one made before migration 016:
 * its row and its file in <data>/uploads, no blob.
 */
async function uploadImages(server: TestServer): Promise<void> {
  const { client, user } = await loggedInClient(server);
  for (const bytes of [quadrantPng(), everyBytePng(3 * 1024 * 1024 + 17), everyBytePng(5_000)]) {
    const { status, filename } = await uploadImage(client, bytes);
    expect(status).toBe(200);
    images.set(filename, bytes);
  }
  const legacy = `${randomHex(16)}.jpg`;
  await server.context.db.run(
    "INSERT INTO uploads (filename, user_id, content_type, create_time) VALUES (?, ?, 'image/jpeg', ?)",
    legacy,
    user.id,
    Date.now() - 30 * 86_400_000,
  );
  mkdirSync(server.context.uploadsDir, { recursive: true });
  writeFileSync(join(server.context.uploadsDir, legacy), JPEG);
  images.set(legacy, JPEG);
}

/** A server on a copy (nothing in its own <data>/uploads) serves every image byte for byte. */
async function expectImagesServed(database: { dataDir: string; databaseUrl?: string }): Promise<void> {
  const server = await startServer({ ...database, host: "127.0.0.1", port: 0, allowPrivateUrls: true });
  try {
    for (const [filename, bytes] of images) {
      const answer = await downloadImage(server.url, filename);
      expect({ filename, status: answer.status, length: answer.bytes.length }).toEqual({
        filename,
        status: 200,
        length: bytes.length,
      });
      expect(answer.bytes.equals(bytes)).toBe(true);
    }
  } finally {
    await server.stop();
  }
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

/** Changes an admin makes through the back office: audit rows naming the account and its IP (issue 30). */
async function auditSomeChanges(server: TestServer): Promise<void> {
  const { client } = await loggedInClient(server, { role: "admin" });
  for (const name of ["审计一", "审计二"]) {
    const answer = await client.call("/api/admin/permissions/update", { name, desc: "" });
    expect(answer.code).toBe(0);
  }
}

const auditRows = async (db: Db) => await db.all("SELECT * FROM audit_log ORDER BY id");

describe.skipIf(!testClusterUrl())("ferry db copy on PostgreSQL", () => {
  const dir = mkdtempSync(join(tmpdir(), "ferry-db-copy-"));
  const dataDir = join(dir, "data");
  let target: TestDatabase;

  beforeAll(async () => {
    const server = await startSqliteShop(dataDir);
    try {
      await fillShop(server);
      await uploadImages(server);
      await auditSomeChanges(server);
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
    const originalAudit = await auditRows(original);
    expect(originalAudit.filter((row) => (row as { ip: string }).ip === "127.0.0.1")).toHaveLength(2);
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

    const from = parseEndpoint(dataDir);
    const source = await openEndpoint(from, "source");
    const pg = await openEndpoint(parseEndpoint(target.url), "target");
    const there = await copyDatabase(source, pg, {
      migrations,
      batchRows: 5,
      legacyUploadsDir: legacyUploadsDir(from),
    });
    await source.close();
    expect(there.comparison.accountDifferences).toEqual([]);
    expect(there.comparison.counts.filter((row) => row.source !== row.target)).toEqual([]);
    expect(there.comparison.equal).toBe(true);
    // The three uploads' blobs and the older upload's file, as the CLI says it.
    expect(there.comparison.counts.find((row) => row.table === "upload_blobs")).toEqual({
      table: "upload_blobs",
      source: 4,
      target: 4,
    });
    const imageBytes = [...images.values()].reduce((sum, bytes) => sum + bytes.length, 0);
    expect(there.comparison.imageBytes).toEqual({ source: imageBytes, target: imageBytes });
    expect(formatComparison(there.comparison, 5)).toContain(
      `upload_blobs: 1 images made before the blobs were read from ${join(dataDir, "uploads")}`,
    );
    await expectImagesServed({ dataDir: join(dir, "pg-server"), databaseUrl: target.url });
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
    // The audit trail moves whole (it is never edited or deleted), and its ids continue after it.
    expect(await auditRows(pg)).toEqual(originalAudit);
    const lastAudit = originalAudit.at(-1) as { id: number };
    const nextAudit = await pg.get<{ id: number }>(
      "INSERT INTO audit_log (time, actor, action) VALUES (1, 'system', 'test.after_copy') RETURNING id",
    );
    expect(nextAudit?.id).toBe(lastAudit.id + 1);
    const pgAudit = await auditRows(pg);

    const backFile = join(dir, "back", "ferry.db");
    const back = await openEndpoint(parseEndpoint(`sqlite:${backFile}`), "target");
    const returned = await copyDatabase(pg, back, { migrations });
    await pg.close();
    expect(returned.comparison.accountDifferences).toEqual([]);
    expect(returned.comparison.equal).toBe(true);
    const after = await ledgerSums(back);
    expect(await counts(back as typeof original)).toEqual(originalCounts);
    expect(await auditRows(back)).toEqual(pgAudit);
    expect(after.totals).toEqual(before.totals);
    const byId = (sums: typeof before) => [...sums.accounts].sort(([a], [b]) => a.localeCompare(b));
    expect(byId(after)).toEqual(byId(before));
    await back.close();
    await expectImagesServed({ dataDir: dirname(backFile) });
  }, 60_000);

  test("the CLI copies the images too, the older upload's file among them, and says so", async () => {
    const fresh = (await createTestDatabase()) as TestDatabase;
    try {
      const run = await ferry(["db", "copy", "--from", dataDir, "--to", fresh.url]);
      expect({ code: run.code, stderr: run.stderr.includes("copy failed") }).toEqual({
        code: 0,
        stderr: false,
      });
      const imageBytes = [...images.values()].reduce((sum, bytes) => sum + bytes.length, 0);
      expect(run.stdout).toMatch(/^upload_blobs +4 +4$/m);
      expect(run.stdout).toMatch(new RegExp(`^Σ uploaded image bytes +${imageBytes} +${imageBytes}$`, "m"));
      expect(run.stdout).toContain(
        `upload_blobs: 1 images made before the blobs were read from ${join(dataDir, "uploads")}`,
      );
      expect(run.stdout.trimEnd().endsWith("\nequal")).toBe(true);
      await expectImagesServed({ dataDir: join(dir, "cli-pg-server"), databaseUrl: fresh.url });
    } finally {
      await fresh.drop();
    }
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
