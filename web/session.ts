/**
 * App state: who is logged in (learned only from /api/user/userinfo — the session cookie is
 * HttpOnly), their permissions and the public host info. `user === null` means logged out.
 */

import { useSyncExternalStore } from "react";
import type { HostInfo } from "../src/modules/settings/schema.ts";
import type { PermissionGrant, UserInfo } from "../src/modules/user/schema.ts";
import { Code } from "../src/rpc/codes.ts";
import { call, SESSION_EXPIRED_EVENT } from "./api.ts";
import { go } from "./lib/nav.ts";

export interface SessionState {
  /** False until the start-up user-info probe has answered. */
  ready: boolean;
  user: UserInfo | null;
  permissions: PermissionGrant[];
  host: HostInfo | null;
}

let state: SessionState = { ready: false, user: null, permissions: [], host: null };
const listeners = new Set<() => void>();

/** Fired after every change of the user info (login, refresh, permissions, logout). */
export const USER_INFO_CHANGED = "user-info-changed";
const events = new EventTarget();

function setState(patch: Partial<SessionState>, userChanged: boolean) {
  state = { ...state, ...patch };
  for (const listener of listeners) listener();
  if (userChanged) events.dispatchEvent(new Event(USER_INFO_CHANGED));
}

export function getSession(): SessionState {
  return state;
}

export function getUser(): UserInfo | null {
  return state.user;
}

/** Calls `listener` after each user-info change; returns the unsubscribe function. */
export function onUserInfoChanged(listener: () => void): () => void {
  events.addEventListener(USER_INFO_CHANGED, listener);
  return () => events.removeEventListener(USER_INFO_CHANGED, listener);
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

export function useSession(): SessionState {
  return useSyncExternalStore(subscribe, getSession);
}

/** Agency mode: the page host is the agency host, or the user is an agency user. */
export function isAgency(s: SessionState = state): boolean {
  return Boolean(s.user?.is_agency_user || s.host?.agencyMode);
}

/** Reloads the user info; `quiet` for the start-up probe, where 1002 just means "visitor". */
export async function refreshUserInfo(options: { quiet?: boolean } = {}): Promise<UserInfo | null> {
  const answer = await call("/api/user/userinfo", {}, { quiet: options.quiet });
  if (answer.code === Code.ok) {
    setState({ ready: true, user: answer.data, permissions: answer.data.permissions ?? [] }, true);
    return answer.data;
  }
  // A network failure keeps what we knew; any server answer other than 0 means logged out.
  if (answer.code === Code.network) {
    setState({ ready: true }, false);
    return state.user;
  }
  setState({ ready: true, user: null, permissions: [] }, state.user !== null);
  return null;
}

export async function refreshPermissions(): Promise<void> {
  const answer = await call("/api/permission/mypermissions", {});
  if (answer.code !== Code.ok || !state.user) return;
  setState({ permissions: answer.data, user: { ...state.user, permissions: answer.data } }, true);
}

/** After login / sign-up: user info, then permissions, each emitting user-info-changed. */
export async function refreshAfterLogin(): Promise<UserInfo | null> {
  const user = await refreshUserInfo();
  if (user) await refreshPermissions();
  return user;
}

export function clearUser(): void {
  if (state.user === null && state.ready) return;
  setState({ ready: true, user: null, permissions: [] }, true);
}

export async function logout(): Promise<void> {
  await call("/api/user/logout", {}, { quiet: true });
  clearUser();
  go("/login");
}

export async function loadHostInfo(): Promise<HostInfo | null> {
  const answer = await call("/api/host/get", {}, { quiet: true });
  if (answer.code !== Code.ok) return null;
  setState({ host: answer.data }, false);
  return answer.data;
}

window.addEventListener(SESSION_EXPIRED_EVENT, clearUser);
