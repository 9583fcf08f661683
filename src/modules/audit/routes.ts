import { addDays, endOfBusinessDay } from "../../lib/time.ts";
import { defineCall } from "../../rpc/call.ts";
import { AUDIT_MAX_PAGE, type AuditPage, auditListInput } from "./schema.ts";
import { listAudit } from "./service.ts";

export const auditCalls = [
  defineCall({
    // 操作日志 (issue 30): admins only; reading the trail writes no row.
    path: "/api/admin/audit/list",
    access: "admin",
    input: auditListInput,
    async handle(ctx, input): Promise<AuditPage> {
      const timeZone = await ctx.app.settings.get("timezone");
      const limit = input.pageSize === 0 ? AUDIT_MAX_PAGE : input.pageSize;
      return await listAudit(
        ctx.app.db,
        {
          who: input.who || undefined,
          action: input.action || undefined,
          target: input.target || undefined,
          since: input.from ? endOfBusinessDay(addDays(input.from, -1), timeZone) + 1 : undefined,
          until: input.to ? endOfBusinessDay(input.to, timeZone) + 1 : undefined,
        },
        { offset: (input.page - 1) * limit, limit },
      );
    },
  }),
];
