/**
 * Goes to a hash route (`go("/login")` → `/#/login`), keeping any query inside the hash
 * (`go("/feedback?id=1")` → `/#/feedback?id=1`). wouter's own navigate would move that query to
 * `location.search`, where it would stay behind for every later page.
 */
export function go(path: string, options: { replace?: boolean } = {}): void {
  const oldURL = location.href;
  const url = new URL(oldURL);
  url.hash = path.replace(/^#?\/?/, "/");
  history[options.replace ? "replaceState" : "pushState"](null, "", url.href);
  dispatchEvent(new HashChangeEvent("hashchange", { oldURL, newURL: url.href }));
}

/** Current hash path without its query. */
export function currentPath(): string {
  const bare = location.hash.replace(/^#?\/?/, "/");
  const q = bare.indexOf("?");
  return q < 0 ? bare : bare.slice(0, q);
}
