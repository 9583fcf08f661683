/** The lucky-draw board's geometry and pace (web/pages/LuckyDraw.tsx), kept free of the DOM for tests. */

/** Grid cell (1-based lines) of each seat, clockwise round the edge of a `cols` × `rows` grid. */
export interface RingLayout {
  cols: number;
  rows: number;
  cells: { row: number; col: number }[];
  /** The grid has an inside for the button. */
  hasCentre: boolean;
}

/** Seats round the edge of the smallest fitting grid (a single row for up to 4 seats). */
export function ringLayout(seats: number): RingLayout {
  if (seats <= 4) {
    const cells = Array.from({ length: seats }, (_, i) => ({ row: 1, col: i + 1 }));
    return { cols: Math.max(seats, 1), rows: 1, cells, hasCentre: false };
  }
  const cols = Math.max(3, Math.ceil(seats / 4) + 1);
  const rows = Math.max(2, Math.ceil((seats - 2 * cols) / 2) + 2);
  const edge: { row: number; col: number }[] = [];
  for (let col = 1; col <= cols; col += 1) edge.push({ row: 1, col });
  for (let row = 2; row < rows; row += 1) edge.push({ row, col: cols });
  for (let col = cols; col >= 1; col -= 1) edge.push({ row: rows, col });
  for (let row = rows - 1; row >= 2; row -= 1) edge.push({ row, col: 1 });
  return { cols, rows, cells: edge.slice(0, seats), hasCentre: rows >= 3 };
}

/** Full rounds the highlight runs before it slows onto the seat. */
const ROUNDS = 2;
const FASTEST_STEP_MS = 50;
const SLOWEST_STEP_MS = 380;

/** The seats the highlight visits after `from`, ending on `to` after ROUNDS full rounds. */
export function highlightPath(seatCount: number, from: number, to: number): number[] {
  const steps = ROUNDS * seatCount + ((to - from + seatCount) % seatCount);
  return Array.from({ length: steps }, (_, i) => (from + i + 1) % seatCount);
}

/** Each step a little slower than the one before (cubic ease-out of the speed). */
export const stepDelay = (index: number, total: number) =>
  FASTEST_STEP_MS + (SLOWEST_STEP_MS - FASTEST_STEP_MS) * (index / Math.max(total - 1, 1)) ** 3;
