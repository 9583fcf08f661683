import { paymentsInForce } from "../../payments/registry.ts";
import { defineCall } from "../../rpc/call.ts";
import { canMailLinks } from "../user/confirm.ts";
import { emptyInput } from "../user/schema.ts";
import { type HostInfo, settingsPatchSchema } from "./schema.ts";
import { refuseLocalTargets } from "./service.ts";

export const settingsCalls = [
  defineCall({
    path: "/api/host/get",
    access: "public",
    input: emptyInput,
    async handle(ctx): Promise<HostInfo> {
      const s = await ctx.app.settings.all();
      const host = (ctx.request.headers.get("host") ?? "").toLowerCase();
      return {
        preferDomain: s.preferDomain,
        agencyMode: s.agency_host !== "" && host === s.agency_host.toLowerCase(),
        contact_info: s.contact_info,
        group_link: s.group_link,
        resetByMail: await canMailLinks(ctx.app),
        appleIdShareOpen: s.apple_id_share_url.trim() !== "",
        qx_filter_url: s.qx_filter_url,
        qx_rewrite_url: s.qx_rewrite_url,
        notice: {
          notice_show: s.notice_show,
          notice_title: s.notice_title,
          notice_content: s.notice_content,
          notice_mark_red: s.notice_mark_red,
          notice_day_interval: s.notice_day_interval,
        },
      };
    },
  }),
  defineCall({
    path: "/api/admin/config/get",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => await ctx.app.settings.forDisplay(),
  }),
  defineCall({
    path: "/api/admin/config/set_config",
    access: "admin",
    input: settingsPatchSchema,
    async handle(ctx, input) {
      refuseLocalTargets(input, ctx.app.allowPrivateUrls);
      await ctx.app.settings.update(input);
      return await ctx.app.settings.forDisplay();
    },
  }),
  defineCall({
    path: "/api/admin/config/pay_status",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => await paymentsInForce(ctx.app),
  }),
];
