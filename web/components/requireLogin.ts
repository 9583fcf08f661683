import { go } from "../lib/nav.ts";
import { getUser } from "../session.ts";
import { TOAST_SHORT, toast } from "./Toast.tsx";

export const NOT_LOGGED_IN = "暂未登录，请登录";
const REDIRECT_DELAY_MS = 2000;

/**
 * The login-required check (seed 000 §5): true when a user is logged in. Otherwise, by default,
 * toast 暂未登录，请登录 for 2 s and then go to /#/login; with `quiet`, go at once.
 */
export function requireLogin(options: { quiet?: boolean; message?: string } = {}): boolean {
  if (getUser()) return true;
  if (options.quiet) {
    go("/login");
    return false;
  }
  toast.error(options.message ?? NOT_LOGGED_IN, TOAST_SHORT);
  setTimeout(() => go("/login"), REDIRECT_DELAY_MS);
  return false;
}
