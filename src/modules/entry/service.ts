import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import type { Entry, EntryInput } from "./schema.ts";

export interface EntryRow {
  id: string;
  sort_index: number;
  name: string;
  ip: string;
  ip_list: string;
  desc: string;
  visible: number;
  create_time: number;
}

export function toEntry(row: EntryRow): Entry {
  return {
    _id: row.id,
    index: row.sort_index,
    name: row.name,
    ip: row.ip,
    ipList: JSON.parse(row.ip_list) as string[],
    desc: row.desc,
    visible: row.visible === 1,
  };
}

export function findEntry(ctx: AppContext, id: string): Entry | null {
  const row = ctx.db.query<EntryRow, [string]>("SELECT * FROM entries WHERE id = ?").get(id);
  return row ? toEntry(row) : null;
}

export function listEntries(ctx: AppContext): Entry[] {
  return ctx.db
    .query<EntryRow, []>("SELECT * FROM entries ORDER BY sort_index, create_time")
    .all()
    .map(toEntry);
}

export function saveEntry(ctx: AppContext, input: EntryInput, now = Date.now()): Entry {
  const ipList = JSON.stringify([...new Set(input.ipList)]);
  const id = tx(ctx.db, () => {
    if (input._id) {
      const changed = ctx.db
        .query(
          "UPDATE entries SET sort_index = ?, name = ?, ip = ?, ip_list = ?, desc = ?, visible = ? WHERE id = ?",
        )
        .run(input.index, input.name, input.ip, ipList, input.desc, input.visible ? 1 : 0, input._id).changes;
      if (!changed) throw new RpcError(Code.notFound, "入口不存在");
      return input._id;
    }
    const id = newId(now);
    ctx.db
      .query(
        "INSERT INTO entries (id, sort_index, name, ip, ip_list, desc, visible, create_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(id, input.index, input.name, input.ip, ipList, input.desc, input.visible ? 1 : 0, now);
    return id;
  });
  return findEntry(ctx, id) as Entry;
}

/** Lines relayed through the entry lose it (and are not served until an entry is chosen again). */
export function deleteEntry(ctx: AppContext, id: string): void {
  const changed = ctx.db.query("DELETE FROM entries WHERE id = ?").run(id).changes;
  if (!changed) throw new RpcError(Code.notFound, "入口不存在");
}
