/** Shared Apple ID (seed 000 §2 Shared Apple ID, §5, §6, §8): what server and SPA agree on. */

export const APPLE_ID_SHARE_CALL = "/api/apple_id/share_link";

/** `/api/apple_id/share_link`: the sharing page the operator set (setting apple_id_share_url). */
export interface AppleIdShareLink {
  url: string;
}

/**
 * Seed 000 §8 texts. The seed gives some only as English glosses; these are Chinese saying the same
 * (docs/decisions.md, Help pages).
 */
export const AppleIdMsg = {
  /** Visitor (2 s), then the login page. */
  loginRequired: "请您登录后再进行尝试",
  /** Logged in, never paid (10 s): "shared accounts are open only to paid users, buy any product first". */
  notPaid: "共享账号仅对付费用户开放，请先购买任意商品",
  /** The re-read of the account failed (10 s): "Please retry later". */
  retryLater: "请稍后重试",
  /** No sharing link set by the operator. */
  notOpen: "共享 Apple ID 暂未开放",
} as const;
