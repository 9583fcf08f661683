/**
 * Makes the database refuse a kind of write, as a full disk or a broken constraint would, so a
 * test can check what a failing statement leaves behind. A trigger on either engine: SQLite raises
 * from a temporary trigger, PostgreSQL from a PL/pgSQL trigger function (each test server has a
 * database of its own there). The error's message is `message` on both.
 */
import type { Db } from "../src/db/db.ts";

export interface Refusal {
  /** A name for the trigger (and the PostgreSQL function): letters, digits and _. */
  name: string;
  /** What it refuses, as in CREATE TRIGGER: "INSERT", "UPDATE OF status", … */
  event: string;
  table: string;
  message: string;
  /** Refuse only when this holds: portable SQL over NEW.column (subqueries allowed). */
  when?: string;
}

/** Installs the refusal; the function it answers removes it again. */
export async function refuseWrites(db: Db, refusal: Refusal): Promise<() => Promise<void>> {
  const { name, event, table, when } = refusal;
  const message = refusal.message.replaceAll("'", "''");
  if (db.engine === "postgres") {
    await db.exec(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF ${when ?? "TRUE"} THEN RAISE EXCEPTION '${message}'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER ${name} BEFORE ${event} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}()`);
    return () => db.exec(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}()`);
  }
  await db.exec(
    `CREATE TEMP TRIGGER ${name} BEFORE ${event} ON ${table} ${when ? `WHEN ${when}` : ""}
      BEGIN SELECT RAISE(ABORT, '${message}'); END`,
  );
  return () => db.exec(`DROP TRIGGER temp.${name}`);
}
