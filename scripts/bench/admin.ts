/**
 * `bun run bench:admin`: the back office's two heavy reads (issue 16) on a large database, each
 * against a plain indexed SELECT of the same rows in the same database and the same run.
 *
 * Set-up (not measured, one transaction of prepared inserts into a SQLite file in a temp dir with
 * the migrations the server runs): 100 000 users (every 50th with a channel code, every 10th with
 * a running time package), 3 000 000 traffic records (one `spend` record per user and business day
 * over 30 days), usage_days for 20 000 users × 30 days, 5 000 check-ins, 1 000 paid orders and
 * 1 000 lucky draws a day.
 *
 * 1. userlist: listAdminUsers(ctx, {number: 100, filterStr}) — what /api/admin/users/userlist
 *    runs — for an e-mail substring (a scan: LIKE '%…%' uses no index) and with no filter (the
 *    newest 100 by users_create_time). Baseline: `SELECT * FROM users JOIN balances … WHERE id IN (…)` of the
 *    same 100 ids (primary key).
 * 2. basic_stastic over 30 days: basicStastic(ctx, 30, now). Baseline: the rows it aggregates read
 *    plainly through the same indexes (usage_days, sign_uses, prize_draws by day, orders by
 *    pay_time), with no grouping.
 *
 * Rounds alternate ferry / baseline; medians are reported with the ratio ferry / baseline and the
 * database size. It never asserts on time.
 *
 * Usage: bun scripts/bench/admin.ts [--users 100000] [--days 30] [--rounds 5] [--json]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openContext } from "../../cli/shared.ts";
import type { AppContext } from "../../src/context.ts";
import { addDays, businessDay, DAY_MS, endOfBusinessDay, HOUR_MS } from "../../src/lib/time.ts";
import { GB, MB } from "../../src/lib/traffic.ts";
import { basicStastic } from "../../src/modules/stats/service.ts";
import { listAdminUsers } from "../../src/modules/user/admin.ts";
import { median, numberFlag } from "./common.ts";

const argv = process.argv.slice(2);
const options = {
  users: numberFlag(argv, "users", 100_000),
  days: numberFlag(argv, "days", 30),
  rounds: numberFlag(argv, "rounds", 5),
  json: argv.includes("--json"),
};
const USAGE_USERS = Math.min(20_000, options.users);
const SIGN_USES_PER_DAY = Math.min(5_000, options.users);
const ORDERS_PER_DAY = 1_000;
const DRAWS_PER_DAY = 1_000;
/** An e-mail substring matching 1 111 of 100 000 users (bench-7…@, bench-7x…@, …). */
const FILTER = "bench-7";

const log = (message: string) => {
  if (!options.json) console.error(message);
};

const hexId = (n: number, prefix = 0) => (prefix * 1e9 + n).toString(16).padStart(24, "0");

// ---- set-up (not measured) -----------------------------------------------------------------

async function build(ctx: AppContext, now: number, days: string[]) {
  const db = ctx.db;
  const timeZone = await ctx.settings.get("timezone");
  const users = `INSERT INTO users (id, email, password_hash, userkey, proxy_secret, channel_code, paid_user,
       vip_expire_time, create_time)
     VALUES (?, ?, 'x', ?, ?, ?, 1, ?, ?)`;
  // The balances row the insert made (migration 013's trigger).
  const balances = "UPDATE balances SET traffic = ?, spend_traffic = ? WHERE user_id = ?";
  // The day's spend record, with the day's usage in it (migration 020; read as the view usage_days).
  const records = `INSERT INTO traffic_records (user_id, type, "desc", traffic_change, all_traffic, all_spend, day, update_time,
       upload, download, quota, permanent)
     VALUES (?, 'spend', '节点流量', ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
  const signUses =
    "INSERT INTO sign_uses (user_id, day, streak, add_traffic, create_time) VALUES (?, ?, 1, ?, ?)";
  const orders = `INSERT INTO orders (id, user_id, combo_id, "desc", order_money_fen, coupon_discount_fen, status, add_traffic,
       create_time, pay_time)
     VALUES (?, ?, 'combo', '100G', 1500, ?, 'paied', ?, ?, ?)`;
  const draws = `INSERT INTO prize_draws (id, user_id, prize_id, prize_name, cost, gain_traffic, seat, day, create_time)
     VALUES (?, ?, 'prize', '奖品', ?, ?, 0, ?, ?)`;
  const dayStart = (day: string) => endOfBusinessDay(addDays(day, -1), timeZone) + 1;
  await db.tx(async () => {
    for (let i = 0; i < options.users; i++) {
      await db.run(
        users,
        hexId(i),
        `bench-${i}@example.com`,
        `k${hexId(i)}`,
        `s${hexId(i)}`,
        i % 50 === 0 ? `C${String(i).padStart(5, "0")}` : "",
        i % 10 === 0 ? now + 30 * DAY_MS : 0,
        now - (options.users - i) * 60_000,
      );
      await db.run(balances, 100 * GB, days.length * 100 * MB, hexId(i));
    }
    for (const [d, day] of days.entries()) {
      const start = dayStart(day);
      for (let i = 0; i < options.users; i++) {
        const quota = i % 10 === 0 ? 300 * MB : 0;
        const usage = i < USAGE_USERS ? [10 * MB, 290 * MB, quota, 300 * MB - quota] : [0, 0, 0, 0];
        await db.run(
          records,
          hexId(i),
          -100 * MB,
          100 * GB,
          (d + 1) * 100 * MB,
          day,
          start + 20 * HOUR_MS,
          ...usage,
        );
      }
      for (let i = 0; i < SIGN_USES_PER_DAY; i++)
        await db.run(signUses, hexId(i), day, 200 * MB, start + HOUR_MS);
      for (let n = 0; n < ORDERS_PER_DAY; n++) {
        const at = start + Math.floor((n / ORDERS_PER_DAY) * DAY_MS);
        await db.run(
          orders,
          hexId(d * ORDERS_PER_DAY + n, 1),
          hexId((n * 37) % options.users),
          n % 4 === 0 ? 500 : 0,
          100 * GB,
          at - 1000,
          at,
        );
      }
      for (let n = 0; n < DRAWS_PER_DAY; n++) {
        const at = start + Math.floor((n / DRAWS_PER_DAY) * DAY_MS);
        await db.run(
          draws,
          hexId(d * DRAWS_PER_DAY + n, 2),
          hexId((n * 41) % options.users),
          GB,
          n % 3 === 0 ? 2 * GB : 0,
          day,
          at,
        );
      }
    }
  });
  await db.exec("ANALYZE");
  await db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

// ---- measured -------------------------------------------------------------------------------

type Sample = { ferry: number[]; baseline: number[] };

/** Time of `run` in ms. */
async function time(run: () => unknown): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** The rows a userlist answer shows, read by primary key. */
async function userRowsBaseline(ctx: AppContext, ids: string[]) {
  return await ctx.db.all(
    `SELECT * FROM users JOIN balances ON user_id = id WHERE id IN (${ids.map(() => "?").join(", ")})`,
    ...ids,
  );
}

/** The rows basic_stastic aggregates, read plainly through the same indexes. */
async function statsRowsBaseline(ctx: AppContext, days: string[]): Promise<number> {
  const first = days[0] as string;
  const last = days[days.length - 1] as string;
  const timeZone = await ctx.settings.get("timezone");
  const db = ctx.db;
  const from = endOfBusinessDay(addDays(first, -1), timeZone) + 1;
  const to = endOfBusinessDay(last, timeZone);
  return (
    (
      await db.all(
        "SELECT day, quota, permanent, upload, download FROM usage_days WHERE day >= ? AND day <= ?",
        first,
        last,
      )
    ).length +
    (await db.all("SELECT day FROM sign_uses WHERE day >= ? AND day <= ?", first, last)).length +
    (await db.all("SELECT day, cost, gain_traffic FROM prize_draws WHERE day >= ? AND day <= ?", first, last))
      .length +
    (
      await db.all(
        "SELECT pay_time, order_money_fen, coupon_discount_fen FROM orders WHERE status = 'paied' AND pay_time >= ? AND pay_time <= ?",
        from,
        to,
      )
    ).length +
    (await db.all("SELECT traffic FROM balances")).length +
    (await db.all("SELECT vip_expire_time FROM users")).length
  );
}

async function measure(rounds: number, ferry: () => unknown, baseline: () => unknown): Promise<Sample> {
  await ferry();
  await baseline(); // warm-up: page cache and prepared statements
  const sample: Sample = { ferry: [], baseline: [] };
  for (let round = 0; round < rounds; round++) {
    sample.ferry.push(await time(ferry));
    sample.baseline.push(await time(baseline));
  }
  return sample;
}

const work = mkdtempSync(join(tmpdir(), "ferry-bench-admin-"));
try {
  const ctx = await openContext(work);
  const now = Date.now();
  const today = businessDay(now, await ctx.settings.get("timezone"));
  const days = Array.from({ length: options.days }, (_, i) => addDays(today, i - options.days + 1));
  log(`building ${options.users} users and ${options.users * options.days} traffic records in ${work} …`);
  const buildMs = await time(async () => await build(ctx, now, days));
  const counts = await ctx.db.get<
    Record<string, number>
  >(`SELECT (SELECT COUNT(*) FROM users) AS users, (SELECT COUNT(*) FROM traffic_records) AS traffic_records,
         (SELECT COUNT(*) FROM usage_days) AS usage_days, (SELECT COUNT(*) FROM sign_uses) AS sign_uses,
         (SELECT COUNT(*) FROM orders) AS orders, (SELECT COUNT(*) FROM prize_draws) AS prize_draws`);
  const bytes = statSync(join(work, "ferry.db")).size;
  log(
    `built in ${(buildMs / 1000).toFixed(1)} s: ${JSON.stringify(counts)}, ${(bytes / 2 ** 20).toFixed(0)} MiB`,
  );

  const filtered = await listAdminUsers(ctx, { number: 100, filterStr: FILTER });
  const newest = await listAdminUsers(ctx, { number: 100 });
  const stats = await basicStastic(ctx, options.days, now);
  if (filtered.length !== 100 || !filtered.every((u) => u.email.includes(FILTER)) || newest.length !== 100)
    throw new Error("userlist did not answer 100 matching users");
  if (
    stats.stastic_list.length !== options.days ||
    stats.stastic_list[0]?.normalUserNum !== USAGE_USERS * 0.9
  )
    throw new Error(`basic_stastic answered ${JSON.stringify(stats.stastic_list[0])}`);

  const cases = {
    [`userlist filter "${FILTER}"`]: await measure(
      options.rounds,
      async () => await listAdminUsers(ctx, { number: 100, filterStr: FILTER }),
      async () =>
        await userRowsBaseline(
          ctx,
          filtered.map((u) => u._id),
        ),
    ),
    "userlist, no filter": await measure(
      options.rounds,
      async () => await listAdminUsers(ctx, { number: 100 }),
      async () =>
        await userRowsBaseline(
          ctx,
          newest.map((u) => u._id),
        ),
    ),
    [`basic_stastic ${options.days} days`]: await measure(
      options.rounds,
      async () => await basicStastic(ctx, options.days, now),
      async () => await statsRowsBaseline(ctx, days),
    ),
  };
  await ctx.db.close();

  const summary = {
    users: counts?.users,
    trafficRecords: counts?.traffic_records,
    counts,
    databaseBytes: bytes,
    buildSeconds: Math.round(buildMs / 100) / 10,
    rounds: options.rounds,
    results: Object.entries(cases).map(([name, sample]) => ({
      name,
      ferryMs: Math.round(median(sample.ferry) * 100) / 100,
      baselineMs: Math.round(median(sample.baseline) * 100) / 100,
      ratio: Math.round((median(sample.ferry) / median(sample.baseline)) * 100) / 100,
    })),
  };
  if (options.json) {
    console.log(JSON.stringify(summary, null, 2));
  } else {
    const pad = (text: string) => text.padEnd(32);
    console.log(
      [
        "",
        "Back-office reads benchmark",
        "───────────────────────────",
        `database                        ${summary.users} users, ${summary.trafficRecords} traffic records, ` +
          `${counts?.usage_days} usage days, ${counts?.orders} orders: ${(bytes / 2 ** 20).toFixed(1)} MiB`,
        `${pad("")}ferry ms   plain SELECT ms   ratio ferry / SELECT`,
        ...summary.results.map(
          (r) =>
            `${pad(r.name)}${r.ferryMs.toFixed(2).padStart(8)}   ${r.baselineMs.toFixed(2).padStart(15)}   ${r.ratio.toFixed(2).padStart(8)}`,
        ),
        `(median of ${summary.rounds} rounds, same database file, same run; baselines read the same rows by index)`,
      ].join("\n"),
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
