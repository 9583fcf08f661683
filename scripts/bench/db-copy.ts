/**
 * The "must show" of issue 27 item 5: `ferry db copy` of a database with 10,000 users and 300,000
 * traffic records to PostgreSQL and back, with equal counts and ledger sums.
 *
 * Set-up (timed separately): a SQLite database in a temp dir with the migrations the server runs,
 * filled by direct inserts: users with wallet money (one wallet entry each) and, every fourth, a time
 * package; 30 traffic records per user whose sum is the user's traffic balance. Then the copy runs
 * through the code `ferry db copy` runs (openEndpoint, copyDatabase, formatComparison) into a new
 * PostgreSQL database and from there into a new SQLite file. Exits 1 when either comparison differs.
 *
 * Usage: bun scripts/bench/db-copy.ts --cluster postgres://ferry@127.0.0.1:55432/postgres
 *        [--users 10000] [--records 30] (or FERRY_TEST_DATABASE_URL for the cluster)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/db/db.ts";
import { migrate } from "../../src/db/migrate.ts";
import { migrations } from "../../src/embedded.ts";
import { GB, MB } from "../../src/lib/traffic.ts";
import {
  copyDatabase,
  formatComparison,
  legacyUploadsDir,
  openEndpoint,
  parseEndpoint,
  progressPrinter,
} from "../../src/ops/db-copy.ts";
import { newId, randomHex } from "../../src/rpc/ids.ts";
import { createDatabase, numberFlag } from "./common.ts";

const argv = process.argv.slice(2);
const clusterIndex = argv.indexOf("--cluster");
const cluster =
  (clusterIndex >= 0 ? argv[clusterIndex + 1] : undefined) ?? process.env.FERRY_TEST_DATABASE_URL;
if (!cluster) {
  console.error("error: give a PostgreSQL cluster with --cluster postgres://… (or FERRY_TEST_DATABASE_URL)");
  process.exit(1);
}
const options = { users: numberFlag(argv, "users", 10_000), records: numberFlag(argv, "records", 30) };
const DAY_MS = 86_400_000;

/** Fills a fresh SQLite file by direct inserts, balances equal to their ledgers. */
async function generate(file: string): Promise<void> {
  const db = openSqlite(file);
  await migrate(db, migrations);
  const raw = db.raw;
  const now = Date.now();
  const user = raw.prepare(
    "INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time, vip_expire_time, wallet_fen) VALUES (?, ?, 'x', ?, ?, ?, ?, ?)",
  );
  const balance = raw.prepare("UPDATE balances SET traffic = ?, spend_traffic = ? WHERE user_id = ?");
  const record = raw.prepare(
    `INSERT INTO traffic_records (user_id, type, "desc", traffic_change, vip_change, all_traffic, all_spend, day, update_time)
     VALUES (?, ?, '', ?, ?, ?, ?, ?, ?)`,
  );
  const wallet = raw.prepare(
    `INSERT INTO wallet_entries (user_id, type, change_fen, balance_fen, "desc", create_time) VALUES (?, 'adjust', ?, ?, 'bench', ?)`,
  );
  raw.transaction(() => {
    for (let i = 0; i < options.users; i += 1) {
      const id = newId(now);
      const vip = i % 4 === 0 ? now + 30 * DAY_MS : 0;
      const fen = 100 * (i % 97);
      user.run(id, `bench-${i}@example.com`, randomHex(16), crypto.randomUUID(), now, vip, fen);
      let traffic = 0;
      let spent = 0;
      for (let r = 0; r < options.records; r += 1) {
        const bought = r === 0 ? 100 * GB : 0;
        const used = r === 0 ? 0 : (1 + ((i * 7 + r) % 200)) * MB;
        traffic += bought - used;
        spent += used;
        const vipChange = r === 0 ? vip : 0;
        const day = new Date(now - (options.records - r) * DAY_MS).toISOString().slice(0, 10);
        record.run(
          id,
          r === 0 ? "buy" : "use",
          bought - used,
          vipChange,
          traffic,
          spent,
          day,
          now - (options.records - r) * DAY_MS,
        );
      }
      balance.run(traffic, spent, id);
      if (fen > 0) wallet.run(id, fen, fen, now);
    }
  })();
  await db.close();
}

/** One `ferry db copy`: opens both sides as the CLI does, copies, prints the comparison; answers seconds and equality. */
async function copy(from: string, to: string): Promise<{ seconds: number; equal: boolean }> {
  const started = performance.now();
  const endpoint = parseEndpoint(from);
  const source = await openEndpoint(endpoint, "source");
  const target = await openEndpoint(parseEndpoint(to), "target");
  try {
    const result = await copyDatabase(source, target, {
      migrations,
      onProgress: progressPrinter(),
      legacyUploadsDir: legacyUploadsDir(endpoint),
    });
    const seconds = (performance.now() - started) / 1000;
    const accounts = result.tables.find((table) => table.name === "users")?.rows ?? 0;
    console.log(`\n== ${source.describe} → ${target.describe}: ${seconds.toFixed(1)} s\n`);
    console.log(formatComparison(result.comparison, accounts));
    return { seconds, equal: result.comparison.equal };
  } finally {
    await source.close();
    await target.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), "ferry-bench-db-copy-"));
const pg = await createDatabase(cluster, `ferry_bench_copy_${process.pid}`);
try {
  const dataDir = join(dir, "data");
  let started = performance.now();
  await generate(join(dataDir, "ferry.db"));
  const generated = (performance.now() - started) / 1000;
  console.log(
    `generated ${options.users} users, ${options.users * options.records} traffic records in ${generated.toFixed(1)} s`,
  );
  started = performance.now();
  const there = await copy(dataDir, pg.url);
  const back = await copy(pg.url, `sqlite:${join(dir, "back", "ferry.db")}`);
  console.log(
    `\nsummary: SQLite → PostgreSQL ${there.seconds.toFixed(1)} s (${there.equal ? "equal" : "DIFFERENT"}), ` +
      `PostgreSQL → SQLite ${back.seconds.toFixed(1)} s (${back.equal ? "equal" : "DIFFERENT"})`,
  );
  if (!there.equal || !back.equal) process.exitCode = 1;
} finally {
  await pg.drop();
  rmSync(dir, { recursive: true, force: true });
}
