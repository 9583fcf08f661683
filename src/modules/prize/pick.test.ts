/**
 * The draw's chance on its own: 100 000 picks over a weighted table land within 1 % (absolute) of
 * each weight's share, a weight of 0 is never picked, the integer source has no modulo bias, and
 * the board gives every prize a seat.
 */
import { describe, expect, test } from "bun:test";
import { boardLayout, pickWeighted, randomBelow, seatFor } from "./pick.ts";

const DRAWS = 100_000;
/** Fixed tolerance: with 100 000 draws one share's standard deviation is at most 0.16 %, so 1 % is over 6σ. */
const TOLERANCE = 0.01;

function shares(weights: readonly number[], draw: () => number | null): number[] {
  const counts = weights.map(() => 0);
  for (let i = 0; i < DRAWS; i += 1) {
    const index = draw();
    if (index === null) throw new Error("nothing picked");
    counts[index] = (counts[index] ?? 0) + 1;
  }
  return counts.map((count) => count / DRAWS);
}

describe("pickWeighted", () => {
  test("100 000 draws land within 1 % of each weight's share; weight 0 is never picked", () => {
    const weights = [50, 25, 15, 7, 3, 0];
    const total = weights.reduce((a, b) => a + b, 0);
    const observed = shares(weights, () => pickWeighted(weights));
    weights.forEach((weight, index) => {
      const expected = weight / total;
      expect({ index, off: Math.abs((observed[index] as number) - expected) <= TOLERANCE }).toEqual({
        index,
        off: true,
      });
    });
    expect(observed[5]).toBe(0);
  });

  test("a table whose weights sum to 0 (or an empty one) picks nothing", () => {
    expect(pickWeighted([])).toBeNull();
    expect(pickWeighted([0, 0])).toBeNull();
    expect(pickWeighted([0, 4, 0])).toBe(1);
  });

  test("each ticket below the total maps to the weight it falls in", () => {
    const weights = [2, 0, 3];
    const picked = [0, 1, 2, 3, 4].map((ticket) => pickWeighted(weights, () => ticket));
    expect(picked).toEqual([0, 0, 2, 2, 2]);
  });
});

describe("randomBelow", () => {
  test("stays in range and is even where a plain modulo would not be (n = 3·2^30)", () => {
    // 2^32 mod 3·2^30 = 2^30: a modulo without rejection would make [0, 2^30) twice as likely (50 % vs 33 %).
    const n = 3 * 2 ** 30;
    let low = 0;
    for (let i = 0; i < DRAWS; i += 1) {
      const value = randomBelow(n);
      expect(value >= 0 && value < n && Number.isInteger(value)).toBe(true);
      if (value < 2 ** 30) low += 1;
    }
    expect(Math.abs(low / DRAWS - 1 / 3)).toBeLessThanOrEqual(TOLERANCE);
  });

  test("refuses a range it cannot serve", () => {
    for (const n of [0, -1, 1.5, 2 ** 32 + 1]) expect(() => randomBelow(n)).toThrow(RangeError);
  });
});

describe("the board", () => {
  test("gameSeat seats repeat the prizes in order; 0 or too few seats give one per prize", () => {
    expect(boardLayout(3, 8)).toEqual([0, 1, 2, 0, 1, 2, 0, 1]);
    expect(boardLayout(3, 0)).toEqual([0, 1, 2]);
    expect(boardLayout(5, 2)).toEqual([0, 1, 2, 3, 4]);
    expect(boardLayout(0, 8)).toEqual([]);
  });

  test("the landing seat holds the prize and varies among its repeats", () => {
    const layout = boardLayout(3, 8);
    const seats = new Set<number>();
    for (let i = 0; i < 200; i += 1) {
      const seat = seatFor(layout, 1);
      expect(layout[seat]).toBe(1);
      seats.add(seat);
    }
    expect([...seats].sort()).toEqual([1, 4, 7]);
  });
});
