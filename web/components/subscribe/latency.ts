/** The latency colours of the node list (seed 000 §9): under 150 ms green, 150–199 yellow, 200+ red. */
export type LatencyLevel = "none" | "good" | "fair" | "bad";

/** `speed` is the panel's latency in ms; 0 means not measured (未测速). */
export function latencyLevel(speed: number): LatencyLevel {
  if (!(speed > 0)) return "none";
  if (speed < 150) return "good";
  if (speed < 200) return "fair";
  return "bad";
}

export const latencyText = (speed: number) => (latencyLevel(speed) === "none" ? "未测速" : `${speed} ms`);
