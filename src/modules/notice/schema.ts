import { z } from "zod";

export interface Notice {
  _id: string;
  href: string;
  desc: string;
}

export const noticeClickedInput = z.object({ noticeId: z.string().regex(/^[0-9a-f]{24}$/, "noticeId 错误") });
