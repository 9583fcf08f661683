import { z } from "zod";

/** The largest page `/api/admin/audit/list` answers; page size 0 (全部) is this many rows. */
export const AUDIT_MAX_PAGE = 500;

/** A business day, or "" (an empty date field: no bound). */
const day = z
  .string()
  .regex(/^(\d{4}-\d{2}-\d{2})?$/, "日期格式应为 YYYY-MM-DD")
  .optional();

/** 操作日志's filters and page: who, what, target, a date range (business days), the pager. */
export const auditListInput = z.object({
  who: z.string().trim().max(200).optional(),
  action: z.string().trim().max(100).optional(),
  target: z.string().trim().max(200).optional(),
  /** First business day shown (the `timezone` setting), inclusive. */
  from: day,
  /** Last business day shown, inclusive. */
  to: day,
  page: z.number().int().min(1).default(1),
  /** 0 = 全部 (up to AUDIT_MAX_PAGE rows). */
  pageSize: z.number().int().min(0).max(AUDIT_MAX_PAGE).default(20),
});
export type AuditListInput = z.input<typeof auditListInput>;

/** One row of the audit trail as the back office and `ferry audit --json` show it. */
export interface AuditRow {
  id: number;
  /** Milliseconds since the epoch. */
  time: number;
  actor: string;
  ip: string;
  action: string;
  target: string;
  /** Field → `{old, new}` (an edit), `{new}` (a create) or `{old}` (a delete); secrets masked. */
  diff: Record<string, { old?: unknown; new?: unknown }>;
}

export interface AuditPage {
  list: AuditRow[];
  total: number;
}
