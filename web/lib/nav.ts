import { navigate } from "wouter/use-hash-location";

/** Goes to a hash route (`go("/login")` → `/#/login`). */
export function go(path: string, options: { replace?: boolean } = {}): void {
  navigate(path, { replace: options.replace ?? false });
}

/** Current hash path without its query. */
export function currentPath(): string {
  const bare = location.hash.replace(/^#?\/?/, "/");
  const q = bare.indexOf("?");
  return q < 0 ? bare : bare.slice(0, q);
}
