import type { AppContext } from "../../context.ts";
import { isSafeHref } from "../../lib/links.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { type NewNotice, type Notice, newNoticeInput } from "./schema.ts";

/** Adds a bell notice for one user, or for everyone when userId is null; a link of another scheme is 1000. */
export async function createNotice(ctx: AppContext, input: NewNotice): Promise<string> {
  const parsed = newNoticeInput.safeParse(input);
  if (!parsed.success) throw new RpcError(Code.badInput, parsed.error.issues[0]?.message ?? "通知错误");
  const notice = parsed.data;
  const id = newId();
  await ctx.db.run(
    'INSERT INTO notices (id, user_id, href, "desc", create_time) VALUES (?, ?, ?, ?, ?)',
    id,
    notice.userId,
    notice.href,
    notice.desc,
    Date.now(),
  );
  return id;
}

/** The notices the user has not clicked yet, newest first. */
export async function listNotices(ctx: AppContext, userId: string): Promise<Notice[]> {
  return (
    (
      await ctx.db.all<Notice>(
        `SELECT n.id AS _id, n.href, n.desc FROM notices n
       WHERE (n.user_id IS NULL OR n.user_id = ?)
         AND NOT EXISTS (SELECT 1 FROM notice_clicks c WHERE c.notice_id = n.id AND c.user_id = ?)
       ORDER BY n.create_time DESC LIMIT 50`,
        userId,
        userId,
      )
    )
      // Rows saved before links were checked lose a link of another scheme.
      .map((notice) => (notice.href === "" || isSafeHref(notice.href) ? notice : { ...notice, href: "" }))
  );
}

/** Records a click; unknown or foreign notices are ignored (returns false). */
export async function markNoticeClicked(ctx: AppContext, userId: string, noticeId: string): Promise<boolean> {
  return (
    (
      await ctx.db.run(
        `INSERT INTO notice_clicks (notice_id, user_id, click_time)
         SELECT id, ?, ? FROM notices WHERE id = ? AND (user_id IS NULL OR user_id = ?)
         ON CONFLICT DO NOTHING`,
        userId,
        Date.now(),
        noticeId,
        userId,
      )
    ).changes > 0
  );
}
