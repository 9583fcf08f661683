/**
 * The draw page's geometry and the prize form without a browser: seats sit clockwise round the
 * edge of a grid (every seat on its own cell, the centre free for the button), the highlight's
 * path ends on the server's seat after whole rounds, and a new prize's draft passes the server's
 * prizeInput while a bad one gets its message on its own field.
 */
import { describe, expect, test } from "bun:test";
import "../no-eval.ts";
import { prizeInput } from "../../src/modules/prize/schema.ts";
import { schemaErrors } from "../components/admin/formErrors.ts";
import { highlightPath, ringLayout } from "../lib/drawBoard.ts";
import { draftToPrize, newPrizeDraft } from "./admin/Prizes.tsx";

describe("ringLayout", () => {
  test("8 seats ring a 3 × 3 grid clockwise with the centre free", () => {
    const ring = ringLayout(8);
    expect({ cols: ring.cols, rows: ring.rows, hasCentre: ring.hasCentre }).toEqual({
      cols: 3,
      rows: 3,
      hasCentre: true,
    });
    expect(ring.cells.map(({ row, col }) => `${row},${col}`)).toEqual([
      "1,1",
      "1,2",
      "1,3",
      "2,3",
      "3,3",
      "3,2",
      "3,1",
      "2,1",
    ]);
  });

  test("every seat count from 1 to 24 fits, each seat on its own edge cell", () => {
    for (let seats = 1; seats <= 24; seats += 1) {
      const ring = ringLayout(seats);
      const keys = ring.cells.map(({ row, col }) => `${row},${col}`);
      expect({ seats, distinct: new Set(keys).size }).toEqual({ seats, distinct: seats });
      for (const { row, col } of ring.cells) {
        const onEdge = row === 1 || row === ring.rows || col === 1 || col === ring.cols;
        expect({ seats, row, col, onEdge }).toEqual({ seats, row, col, onEdge: true });
      }
    }
    expect(ringLayout(3)).toMatchObject({ cols: 3, rows: 1, hasCentre: false });
  });
});

describe("highlightPath", () => {
  test("runs whole rounds and stops on the target seat", () => {
    const path = highlightPath(8, 7, 2);
    expect(path.at(-1)).toBe(2);
    expect(path[0]).toBe(0);
    expect(path.length % 8).toBe(3);
    expect(path.length).toBeGreaterThan(8);
    expect(highlightPath(8, 2, 2).at(-1)).toBe(2);
  });
});

describe("the prize form", () => {
  test("a new prize's draft holds seed 001 §9's defaults and passes the server's schema", () => {
    const prize = draftToPrize(newPrizeDraft());
    expect(prize).toEqual({
      name: "一等奖",
      gainTraffic: 10,
      gainVipTime: 0,
      weight: 1,
      desc: "",
      hasDiscountCoupon: false,
      photoUrl: "",
    });
    expect(schemaErrors(prizeInput, prize)).toEqual({});
  });

  test("bad values are reported on their own fields in Chinese", () => {
    const blank = schemaErrors(prizeInput, draftToPrize({ ...newPrizeDraft(), weight: "" }));
    expect(blank).toEqual({ weight: "请输入数字" });
    const coupon = {
      ...newPrizeDraft(),
      hasDiscountCoupon: true,
      discountValue: "0.85",
      discountDuration: "0",
    };
    expect(schemaErrors(prizeInput, draftToPrize(coupon))).toEqual({
      discountValue: "折扣须在 0 到 1 之间，以 0.1 为单位（0 为免单）",
      discountDuration: "优惠券有效天数须为 1 到 3650 的整数",
    });
  });
});
