/**
 * The whole-body checks of node reports (issue 11 §4, §6) at their edges: the ids JSON.parse would
 * quietly accept, keys hidden inside values, the byte bound exactly, and the alive limits.
 */
import { describe, expect, test } from "bun:test";
import {
  ALIVE_MAX_IPS,
  ALIVE_MAX_USERS,
  checkAlive,
  checkPush,
  isUserNo,
  REPORT_MAX_BYTES,
} from "./report.ts";

describe("isUserNo", () => {
  test("only the integer's own digits", () => {
    for (const ok of ["1", "8", "10", "9007199254740991"]) expect(isUserNo(ok)).toBe(true);
    for (const bad of ["0", "08", "+8", "-8", "8.0", " 8", "8 ", "1e3", "0x8", "", "9007199254740992", "٨"]) {
      expect(isUserNo(bad)).toBe(false);
    }
  });
});

describe("checkPush", () => {
  test("a well-formed report: every entry, in order, zero entries included", () => {
    const checked = checkPush(' { "2" : [1, 2],\n"10":[0,0] } ');
    expect(checked).toEqual({
      ok: true,
      value: new Map([
        [2, [1, 2]],
        [10, [0, 0]],
      ]),
    });
    expect(checkPush("{}")).toEqual({ ok: true, value: new Map() });
  });

  test("braces, commas, colons and quotes inside IP-like strings do not hide or invent keys", () => {
    expect(checkPush('{"1":[1,2],"2":[3,4]}').ok).toBe(true);
    // A nested object's keys are not user ids; its value is refused as bytes, not as a key.
    const nested = checkPush('{"1":{"08":1,"1":2}}');
    expect(nested).toEqual({
      ok: false,
      message: "user 1: bytes must be [upload, download], two non-negative integers",
    });
    // An escaped quote in a key is part of the key as written.
    expect(checkPush('{"1\\"":[1,2]}')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/is not a user id/),
    });
    expect(checkPush('{"\\u0031":[1,2]}')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/is not a user id/),
    });
  });

  test("a duplicate key is refused even when JSON.parse would keep one value", () => {
    expect(checkPush('{"1":[1,2],"1":[1,2]}')).toEqual({
      ok: false,
      message: "user 1 appears more than once",
    });
  });

  test("the bound is inclusive, per user and for the report", () => {
    expect(checkPush(`{"1":[0,${REPORT_MAX_BYTES}]}`).ok).toBe(true);
    expect(checkPush(`{"1":[1,${REPORT_MAX_BYTES}]}`)).toMatchObject({ ok: false });
    const half = REPORT_MAX_BYTES / 2;
    expect(checkPush(`{"1":[0,${half}],"2":[${half},0]}`).ok).toBe(true);
    expect(checkPush(`{"1":[0,${half}],"2":[${half},1]}`)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/in all/),
    });
    expect(REPORT_MAX_BYTES).toBe(1_080_000_000_000_000);
    expect(2 * REPORT_MAX_BYTES).toBeLessThan(Number.MAX_SAFE_INTEGER);
  });

  test("byte counts JSON.parse turns into unsafe or fractional numbers are refused", () => {
    for (const value of ["9007199254740992", "1e300", "0.5", "-0.0001", "true", "[]"]) {
      expect(checkPush(`{"1":[0,${value}]}`).ok).toBe(false);
    }
  });
});

describe("checkAlive", () => {
  test("at most ALIVE_MAX_USERS users; of each user's IPs the first ALIVE_MAX_IPS", () => {
    const ips = Array.from({ length: ALIVE_MAX_IPS }, (_, i) => `198.51.100.${i}`);
    expect(checkAlive(JSON.stringify({ 1: ips, 2: [] }))).toEqual({
      ok: true,
      value: new Map([
        [1, ips],
        [2, []],
      ]),
    });
    // More IPs than any device limit: the first ALIVE_MAX_IPS are kept, the report is not refused.
    expect(checkAlive(JSON.stringify({ 1: [...ips, "198.51.100.99"] }))).toEqual({
      ok: true,
      value: new Map([[1, ips]]),
    });
    const users = Object.fromEntries(
      Array.from({ length: ALIVE_MAX_USERS + 1 }, (_, i) => [i + 1, ["1.1.1.1"]]),
    );
    expect(checkAlive(JSON.stringify(users))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/at most/),
    });
  });

  test("an IP must be non-empty text of at most 64 characters", () => {
    for (const ip of ['""', "1", "null", JSON.stringify("x".repeat(65))]) {
      expect(checkAlive(`{"1":[${ip}]}`).ok).toBe(false);
    }
    expect(checkAlive(`{"1":[${JSON.stringify("[2001:db8::1]:443")}]}`).ok).toBe(true);
  });
});
