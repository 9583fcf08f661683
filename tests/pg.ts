/**
 * A fresh PostgreSQL database per test server when the suite runs on PostgreSQL (`bun run test`
 * sets FERRY_TEST_DATABASE_URL to a throwaway cluster's maintenance database, scripts/test.ts).
 * Unset, the tests run on SQLite and these return null.
 */
import { SQL } from "bun";

export interface TestDatabase {
  url: string;
  /** Drops the database, closing whatever connections are still open to it. */
  drop(): Promise<void>;
}

let created = 0;
/** The database of each test server's data directory, so that CLI commands given `--data` reach it. */
const byDataDir = new Map<string, string>();

export function registerTestDatabase(dataDir: string, url: string): void {
  byDataDir.set(dataDir, url);
}

/** The PostgreSQL URL of the test server whose data directory this is, if it runs on PostgreSQL. */
export function testDatabaseOf(dataDir: string): string | undefined {
  return byDataDir.get(dataDir);
}

/** The maintenance URL the tests run against, or null on SQLite. */
export function testClusterUrl(): string | null {
  return process.env.FERRY_TEST_DATABASE_URL || null;
}

/** Runs one statement on the cluster's maintenance database over a connection of its own. */
async function admin(clusterUrl: string, statement: string): Promise<void> {
  const sql = new SQL({ url: clusterUrl, max: 1 });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.close();
  }
}

/** Creates an empty database with a name no other call (in any process) uses. */
export async function createTestDatabase(): Promise<TestDatabase | null> {
  const clusterUrl = testClusterUrl();
  if (!clusterUrl) return null;
  created += 1;
  const name = `ferry_t_${process.pid}_${created}_${Math.random().toString(36).slice(2, 8)}`;
  await admin(clusterUrl, `CREATE DATABASE ${name}`);
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin(clusterUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** The URL of a fresh database (dropped with the cluster), or null on SQLite. */
export async function testDatabaseUrl(): Promise<string | null> {
  return (await createTestDatabase())?.url ?? null;
}
