/**
 * The draw's chance, kept pure so that its distribution can be tested on its own: an unbiased
 * cryptographic integer, a pick by weight, and the board's seat layout.
 */

const UINT32_RANGE = 2 ** 32;

/** A uniform integer in [0, n) from crypto.getRandomValues; rejection removes the modulo bias. */
export function randomBelow(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > UINT32_RANGE) throw new RangeError(`randomBelow(${n})`);
  // The largest multiple of n that fits: values at or above it would favour the low remainders.
  const limit = UINT32_RANGE - (UINT32_RANGE % n);
  const word = new Uint32Array(1);
  for (;;) {
    crypto.getRandomValues(word);
    const value = word[0] as number;
    if (value < limit) return value % n;
  }
}

/**
 * The index of the weight picked, with probability weight / Σ weights. Weights are integers ≥ 0;
 * null when they sum to 0 (nothing can be won).
 */
export function pickWeighted(
  weights: readonly number[],
  below: (n: number) => number = randomBelow,
): number | null {
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (total <= 0) return null;
  let ticket = below(total);
  for (const [index, weight] of weights.entries()) {
    if (ticket < weight) return index;
    ticket -= weight;
  }
  throw new Error("pickWeighted: ticket beyond the total");
}

/**
 * The board: `gameSeat` seats (0 = one per prize, and never fewer than the prizes so that each has
 * a seat), filled with the prizes in order, repeating from the first. Answers prize indexes.
 */
export function boardLayout(prizeCount: number, gameSeat: number): number[] {
  if (prizeCount === 0) return [];
  const seats = Math.max(gameSeat, prizeCount);
  return Array.from({ length: seats }, (_, seat) => seat % prizeCount);
}

/** A seat holding `prizeIndex`, chosen evenly among its repeats, so the landing spot varies. */
export function seatFor(layout: readonly number[], prizeIndex: number, below = randomBelow): number {
  const seats = layout.flatMap((index, seat) => (index === prizeIndex ? [seat] : []));
  if (seats.length === 0) throw new Error(`prize ${prizeIndex} has no seat`);
  return seats[below(seats.length)] as number;
}
