/**
 * Constants of the user module that the SPA needs before it needs any schema (web/startup.ts, the header),
 * kept apart from schema.ts so importing them does not bring zod into the first page (issue 18).
 * schema.ts re-exports them.
 */

/** Sessions, one-time login links and trusted-browser tokens: 256-bit random, as lowercase hex. */
export const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

/** The channel_code cookie value for visitors who came without `?c=` (seed 000 §4). */
export const NO_CHANNEL_CODE = "nocode";

/** The fixed default logo sent as icon_url on sign-up, and the avatar fallback. */
export const DEFAULT_ICON = "/logo.svg";
