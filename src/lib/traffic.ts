/** Traffic units: bytes everywhere, 1024 powers for display (DESIGN §6). */
export const MB = 1024 ** 2;
export const GB = 1024 ** 3;
export const TB = 1024 ** 4;

/** Default daily time-package quota when a user has none set (seed 000 §9). */
export const DEFAULT_DAILY_LIMIT = 50 * GB;

export function formatGB(bytes: number): string {
  return (bytes / GB).toFixed(2);
}

export function formatTraffic(bytes: number): string {
  return Math.abs(bytes) >= TB ? `${(bytes / TB).toFixed(2)} T` : `${formatGB(bytes)} G`;
}

/** A traffic change in GB with its sign: "+1.00", "-0.50", "0.00". */
export function formatSignedGB(bytes: number): string {
  if (bytes === 0) return formatGB(0);
  return `${bytes > 0 ? "+" : "-"}${formatGB(Math.abs(bytes))}`;
}
