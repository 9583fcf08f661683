/** The messaging service of seed 000 §2 (the Telegram bot): what the profile page shows and says. */

/** `/api/user/bind_info`: whether the bot is on, whether this account is bound, and how to bind. */
export interface BindInfo {
  /** A bot token is configured: the profile shows the bind section only then. */
  enabled: boolean;
  bound: boolean;
  /** The bot's @username (from getMe), "" when not known yet. */
  botUsername: string;
  /** What to send the bot in a private chat, e.g. "/bind 65a1f0c2e4b0a1b2c3d4e5f6 48291307"; "" when bound. */
  command: string;
  /**
   * The same as a link that opens the bot and sends it (https://t.me/<bot>?start=<userId>_<code>);
   * "" when bound or while the bot's username is not known.
   */
  link: string;
  /** When the code in `command` stops working (ms); 0 when bound. */
  expireTime: number;
  /** The bound chat as its owner knows it: "@username", else the name it had when bound; "" when not bound. */
  chatName: string;
  /** When the chat was bound (ms); 0 when not bound. */
  bindTime: number;
}

export const BindMsg = {
  confirmUnbind: "确认解除绑定?",
  unbindWarning: "解除绑定后，将无法再通过 Telegram 机器人操作此账号。",
  unbound: "解除成功",
  unbindFailed: "解除失败",
  agencyRefused: "代理账号不能绑定 Telegram",
} as const;

/** The bind command's keyword: "/bind <userId> <code>". */
export const BIND_KEYWORD = "/bind";
/** Digits of a bind code. */
export const BIND_CODE_DIGITS = 8;
/** How long a bind code works. */
export const BIND_CODE_TTL_MS = 10 * 60_000;
/** Wrong codes an account's live code survives; the next one voids it (a fresh one is on the profile page). */
export const BIND_CODE_MAX_FAILURES = 5;
