import { z } from "zod";
import { recordId } from "../../lib/id-schema.ts";
import { isSafeHref } from "../../lib/links.ts";

export interface Notice {
  _id: string;
  href: string;
  desc: string;
}

// In a module without zod, for the header on the SPA's first page.
export { NOTICE_POLL_MS } from "./constants.ts";

export const noticeClickedInput = z.object({ noticeId: recordId("noticeId 错误") });

/** A new bell notice; its link is followed by the SPA, so only relative or http(s) links (issue 11). */
export const newNoticeInput = z.object({
  userId: z.string().nullable(),
  desc: z.string().trim().min(1, "通知内容不能为空").max(500),
  href: z
    .string()
    .trim()
    .max(2000)
    .refine((href) => href === "" || isSafeHref(href), "通知链接只能是站内链接或 http(s) 链接")
    .default(""),
});
export type NewNotice = z.input<typeof newNoticeInput>;
