/**
 * Query parameters of a hash route. The SPA's links carry their query inside the hash
 * (`/#/confirm?serial_id=…`); the server-side ones (`/?c=…#/login`) sit in location.search.
 */
export function hashPathAndQuery(hash = location.hash): { path: string; query: URLSearchParams } {
  const bare = hash.replace(/^#?\/?/, "/");
  const q = bare.indexOf("?");
  return q < 0
    ? { path: bare, query: new URLSearchParams() }
    : { path: bare.slice(0, q), query: new URLSearchParams(bare.slice(q + 1)) };
}

/** Both query strings merged; the hash query wins when a name appears in both. */
export function readQuery(): URLSearchParams {
  const merged = new URLSearchParams(location.search);
  for (const [name, value] of hashPathAndQuery().query) merged.set(name, value);
  return merged;
}

/** A parameter with the trailing slash some links carry stripped (seed 000 §4). */
export function queryParam(name: string): string | null {
  const value = readQuery().get(name);
  return value === null ? null : value.replace(/\/$/, "");
}
