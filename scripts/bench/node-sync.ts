/**
 * `bun scripts/bench/node-sync.ts`: what one node's user pull costs at 100 000 eligible users
 * (issue 31 §5): the full list (every UniProxy backend, and our agent before delta sync) against
 * the delta our agent now asks for (`?since=<version held>`) after a few changes.
 *
 * Set-up (not measured): the server in this process on a temp SQLite file (or, with
 * `--database-url <cluster URL>`, a scratch PostgreSQL database), one node with push.ts's three
 * lines, `--users` users with permanent traffic (every fourth with a time package). Each round
 * changes `--changes` users (a reset uuid, a user disabled, one whose traffic ran out, a new
 * user), then times a full pull and a delta pull from the version held before the changes, over
 * HTTP on 127.0.0.1 (ms to the last body byte, CPU ms of this process, which is server and
 * client, and bytes of the body). The delta is checked: applied
 * to the list held it gives exactly the full list. Medians are printed; nothing is asserted on time.
 * On a panel without delta sync the delta pull answers the full list, so the same script measures
 * the code before (`delta bytes` = full bytes).
 *
 * Usage: bun scripts/bench/node-sync.ts [--users 100000] [--changes 5] [--rounds 5] [--database-url <url>]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GB } from "../../src/lib/traffic.ts";
import type { NodeUser } from "../../src/modules/node-api/service.ts";
import { type AgentRow, findAgentRow } from "../../src/modules/node-record/service.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { startServer } from "../../src/server.ts";
import { createDatabase, median, numberFlag } from "./common.ts";
import { buildNode, buildUsers } from "./push.ts";

const argv = process.argv.slice(2);
const urlIndex = argv.indexOf("--database-url");
const options = {
  users: numberFlag(argv, "users", 100_000),
  changes: numberFlag(argv, "changes", 5),
  rounds: numberFlag(argv, "rounds", 5),
  clusterUrl: urlIndex >= 0 ? argv[urlIndex + 1] : undefined,
};

interface Pull {
  ms: number;
  /** CPU of this process (server and client) during the pull: steadier than ms on a busy machine. */
  cpuMs: number;
  bytes: number;
  body: { users: NodeUser[]; removed?: number[]; since?: string };
  etag: string;
}

async function pull(url: string): Promise<Pull> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const response = await fetch(url, { headers: { "user-agent": "ferry-agent/bench" } });
  const text = await response.text();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (response.status !== 200) throw new Error(`user pull: HTTP ${response.status} ${text.slice(0, 200)}`);
  return {
    ms,
    cpuMs: (used.user + used.system) / 1000,
    bytes: Buffer.byteLength(text),
    body: JSON.parse(text),
    etag: response.headers.get("etag") ?? "",
  };
}

/** The node's list after a delta (or the full list it was sent). */
function applied(held: NodeUser[], answer: Pull["body"]): NodeUser[] {
  if (!answer.since) return answer.users;
  const byId = new Map(held.map((user) => [user.id, user]));
  for (const id of answer.removed ?? []) byId.delete(id);
  for (const user of answer.users) byId.set(user.id, user);
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-node-sync-"));
  const scratch = options.clusterUrl
    ? await createDatabase(options.clusterUrl, `bench_node_sync_${process.pid}`)
    : null;
  const server = await startServer({ dataDir, databaseUrl: scratch?.url, host: "127.0.0.1", port: 0 });
  try {
    const ctx = server.context;
    const now = Date.now();
    console.error(`set-up: ${options.users} users on ${scratch ? "PostgreSQL" : "SQLite"} …`);
    const agentId = await buildNode(ctx);
    const users = await buildUsers(ctx, options.users, now);
    const node = (await findAgentRow(ctx, agentId)) as AgentRow;
    const base = `${server.url}/api/v1/server/UniProxy/user?${new URLSearchParams({
      token: node.api_token,
      node_id: String(node.node_no),
      node_type: "ferry",
    })}`;
    let held = await pull(base);
    const full: Pull[] = [];
    const delta: Pull[] = [];
    for (let round = 0; round < options.rounds; round++) {
      for (let i = 0; i < options.changes; i++) {
        const user = users[(round * 7919 + i * 104_729) % users.length] as { id: string };
        const column = ["proxy_secret", "disabled", "traffic"][i % 3] as string;
        if (column === "traffic")
          await ctx.db.run("UPDATE balances SET traffic = 0 WHERE user_id = ?", user.id);
        else
          await ctx.db.run(
            `UPDATE users SET ${column} = ? WHERE id = ?`,
            column === "disabled" ? 1 : crypto.randomUUID(),
            user.id,
          );
      }
      const added = await createUser(ctx, {
        email: `bench-new-${round}@example.com`,
        passwordDigest: transformPassword("bench-password-1"),
      });
      await ctx.db.run("UPDATE balances SET traffic = ? WHERE user_id = ?", GB, added.id);
      const sinceUrl = `${base}&since=${held.etag.replaceAll('"', "")}`;
      // Alternate which goes first, so neither always finds the other's work done.
      const pair = round % 2 === 0 ? [await pull(base), await pull(sinceUrl)] : [];
      if (round % 2 === 1) {
        const d = await pull(sinceUrl);
        pair.push(await pull(base), d);
      }
      const [f, d] = pair as [Pull, Pull];
      full.push(f);
      delta.push(d);
      const rebuilt = applied(held.body.users, d.body);
      if (JSON.stringify(rebuilt) !== JSON.stringify(f.body.users)) throw new Error("delta ≠ full list");
      held = { ...f, body: { users: rebuilt } };
    }
    const figures = (pulls: Pull[]) => ({
      bytes: median(pulls.map((p) => p.bytes)),
      ms: Number(median(pulls.map((p) => p.ms)).toFixed(1)),
      cpuMs: Number(median(pulls.map((p) => p.cpuMs)).toFixed(1)),
    });
    const f = figures(full);
    const d = figures(delta);
    console.log(
      JSON.stringify({
        engine: scratch ? "postgres" : "sqlite",
        users: options.users,
        changesPerRound: options.changes + 1,
        rounds: options.rounds,
        full: f,
        delta: { ...d, answeredAsDelta: delta.filter((p) => p.body.since).length },
        bytesRatio: Number((d.bytes / f.bytes).toPrecision(3)),
      }),
    );
  } finally {
    await server.stop();
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
