import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { recordDelete, recordSave } from "../audit/service.ts";
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

export async function findEntry(ctx: AppContext, id: string): Promise<Entry | null> {
  const row = await ctx.db.get<EntryRow>("SELECT * FROM entries WHERE id = ?", id);
  return row ? toEntry(row) : null;
}

export async function listEntries(ctx: AppContext): Promise<Entry[]> {
  return (await ctx.db.all<EntryRow>("SELECT * FROM entries ORDER BY sort_index, create_time")).map(toEntry);
}

export async function saveEntry(ctx: AppContext, input: EntryInput, now = Date.now()): Promise<Entry> {
  const ipList = JSON.stringify([...new Set(input.ipList)]);
  return await tx(ctx.db, async () => {
    const before = input._id ? await findEntry(ctx, input._id) : null;
    const id = await writeEntry(ctx, input, ipList, now);
    const saved = (await findEntry(ctx, id)) as Entry;
    await recordSave(ctx.db, "entry", id, before, saved);
    return saved;
  });
}

async function writeEntry(ctx: AppContext, input: EntryInput, ipList: string, now: number): Promise<string> {
  if (input._id) {
    const changed = (
      await ctx.db.run(
        'UPDATE entries SET sort_index = ?, name = ?, ip = ?, ip_list = ?, "desc" = ?, visible = ? WHERE id = ?',
        input.index,
        input.name,
        input.ip,
        ipList,
        input.desc,
        input.visible ? 1 : 0,
        input._id,
      )
    ).changes;
    if (!changed) throw new RpcError(Code.notFound, "入口不存在");
    return input._id;
  }
  const id = newId(now);
  await ctx.db.run(
    'INSERT INTO entries (id, sort_index, name, ip, ip_list, "desc", visible, create_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    id,
    input.index,
    input.name,
    input.ip,
    ipList,
    input.desc,
    input.visible ? 1 : 0,
    now,
  );
  return id;
}

/** Lines relayed through the entry lose it (and are not served until an entry is chosen again). */
export async function deleteEntry(ctx: AppContext, id: string): Promise<void> {
  await tx(ctx.db, async () => {
    const removed = await findEntry(ctx, id);
    if (!removed) throw new RpcError(Code.notFound, "入口不存在");
    await ctx.db.run("DELETE FROM entries WHERE id = ?", id);
    await recordDelete(ctx.db, "entry", id, { name: removed.name, ip: removed.ip });
  });
}
