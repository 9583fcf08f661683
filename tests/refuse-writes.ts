/**
 * A trigger that makes the database refuse a write, on either engine, so a test can provoke a
 * failure for real (a full disk, a broken table) in the middle of a statement or a transaction.
 */
import type { Db } from "../src/db/db.ts";

export interface RefusedWrites {
  /** The trigger's name (a plain identifier). */
  name: string;
  table: string;
  /** What it refuses: "INSERT", "UPDATE", "UPDATE OF status", "DELETE". */
  event: string;
  /** The error message the failing statement gets. */
  message: string;
  /** A portable SQL condition over NEW (and other tables): only then is the write refused. */
  when?: string;
}

/** Creates the trigger; the answer drops it again. */
export async function refuseWrites(db: Db, refusal: RefusedWrites): Promise<() => Promise<void>> {
  const { name, table, event, message, when = "TRUE" } = refusal;
  const quoted = `'${message.replaceAll("'", "''")}'`;
  if (db.engine === "postgres") {
    await db.exec(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF ${when} THEN RAISE EXCEPTION ${quoted}; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER ${name} BEFORE ${event} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();`);
    return async () => await db.exec(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}();`);
  }
  await db.exec(`CREATE TEMP TRIGGER ${name} BEFORE ${event} ON ${table} WHEN ${when}
    BEGIN SELECT RAISE(ABORT, ${quoted}); END`);
  return async () => await db.exec(`DROP TRIGGER temp.${name}`);
}
