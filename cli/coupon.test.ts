/**
 * `ferry coupon list|create|batch|delete`, run as real processes against the data directory of a
 * running server: what the CLI makes is what the coupon manager lists, batch prints (or writes) N
 * unique six-letter codes, delete takes ids or codes, bad input is one line and changes nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GB } from "../src/lib/traffic.ts";
import type { Coupon } from "../src/modules/coupon/schema.ts";
import { loggedInClient, type TestServer } from "../tests/harness.ts";
import { expectHelp, expectRefused, type FerryIn, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;
let outDir: string;

beforeAll(async () => {
  ({ server, cli } = await startWithCli());
  outDir = mkdtempSync(join(tmpdir(), "ferry-coupon-out-"));
});
afterAll(async () => {
  await server?.close();
  rmSync(outDir, { recursive: true, force: true });
});

const couponCount = async () =>
  (await server.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM coupons"))?.n ?? 0;

async function managerList(): Promise<Coupon[]> {
  const { client } = await loggedInClient(server, { role: "yunying" });
  return (await client.call<Coupon[]>("/api/yunying/coupon/coupon_list", {})).data;
}

test("every coupon command has --help", async () => {
  await expectHelp([
    [["coupon"], ["list", "create", "batch", "delete"]],
    [
      ["coupon", "list"],
      ["--type", "--taobao", "--data", "--json"],
    ],
    [
      ["coupon", "create"],
      [
        "--type",
        "--traffic-g",
        "--days",
        "--money",
        "--discount",
        "--code",
        "--per-user",
        "--total",
        "--expire",
        "--taobao",
        "--name",
      ],
    ],
    [
      ["coupon", "batch"],
      ["--count", "--out", "--type"],
    ],
    [["coupon", "delete"], ["<id-or-code...>"]],
  ]);
});

test("create makes the coupon the manager lists; list shows its effect and filters", async () => {
  expect(await cli.ok(["coupon", "list"])).toBe("no coupons\n");
  const made = await cli.json<Coupon>([
    "coupon",
    "create",
    "--type",
    "freeUse",
    "--name",
    "新人流量",
    "--traffic-g",
    "1.5",
    "--traffic-hours",
    "72",
    "--code",
    "WELCOME",
    "--per-user",
    "1",
    "--total",
    "0",
    "--expire",
    "2031-06-30",
  ]);
  expect(made).toMatchObject({
    name: "新人流量",
    type: "freeUse",
    code: "WELCOME",
    taobao: false,
    traffic: 1.5 * GB,
    traffixHaveLimitTime: true,
    traffixLimitTime: 72,
    useNumPerUser: 1,
    NumberOfAuthorizations: 0,
  });
  expect((await managerList()).find((c) => c.code === "WELCOME")).toEqual(made);

  const cash = await cli.ok(["coupon", "create", "--type", "cash", "--money", "5", "--taobao"]);
  expect(cash).toMatch(/^created [0-9a-f]{24} {2}[A-Z]{6} {2}cash {6}5\.00 元 {2}used 0\/1/);

  const list = await cli.ok(["coupon", "list"]);
  expect(list).toContain("WELCOME  freeUse   1.50 G  used 0/∞  per user 1  until 2031-06-30");
  expect(list).toContain("新人流量");
  expect((await cli.json<Coupon[]>(["coupon", "list", "--type", "freeUse"])).map((c) => c.code)).toEqual([
    "WELCOME",
  ]);
  expect((await cli.json<Coupon[]>(["coupon", "list", "--taobao"])).map((c) => c.type)).toEqual(["cash"]);
});

test("batch prints N unique six-letter Taobao codes, or writes them to --out", async () => {
  const before = await couponCount();
  const printed = (await cli.ok(["coupon", "batch", "--count", "10", "--type", "freeTime", "--days", "7"]))
    .trim()
    .split("\n");
  expect(printed).toHaveLength(10);
  expect(new Set(printed).size).toBe(10);
  for (const code of printed) expect(code).toMatch(/^[A-Z]{6}$/);
  const listed = await managerList();
  for (const code of printed)
    expect(listed.find((c) => c.code === code)).toMatchObject({ type: "freeTime", vipDay: 7, taobao: true });

  const file = join(outDir, "a.txt");
  expect(
    await cli.ok([
      "coupon",
      "batch",
      "--count",
      "5",
      "--type",
      "discount",
      "--discount",
      "0.9",
      "--out",
      file,
    ]),
  ).toBe(`wrote 5 codes to ${file}\n`);
  const written = readFileSync(file, "utf8");
  expect(written).toMatch(/^([A-Z]{6}\n){5}$/);
  expect(await couponCount()).toBe(before + 15);
});

test("delete takes ids and codes (any case); an unknown one deletes nothing", async () => {
  const a = await cli.json<Coupon>(["coupon", "create", "--type", "cash", "--money", "1", "--code", "DELME"]);
  const b = await cli.json<Coupon>(["coupon", "create", "--type", "cash", "--money", "1"]);
  const before = await couponCount();
  await expectRefused([[["coupon", "delete", "delme", "NOSUCH", "--data", server.dataDir], /NOSUCH/]]);
  expect(await couponCount()).toBe(before);
  expect(await cli.ok(["coupon", "delete", "delme", b._id])).toBe("deleted 2 coupons\n");
  const codes = (await managerList()).map((c) => c.code);
  expect(codes).not.toContain(a.code);
  expect(codes).not.toContain(b.code);
});

test("bad input: one line naming the option, nothing created, an existing --out kept", async () => {
  const before = await couponCount();
  const taken = join(outDir, "taken.txt");
  writeFileSync(taken, "keep\n");
  const data = ["--data", server.dataDir];
  await expectRefused([
    [["coupon", "create", "--type", "discount", "--discount", "0.05", ...data], /--discount: 折扣最小 0.1/],
    [["coupon", "create", "--type", "voucher", ...data], /--type/],
    [["coupon", "create", "--money", "1", ...data], /--type/],
    [["coupon", "create", "--type", "cash", ...data], /现金券金额必须大于 0/],
    [["coupon", "create", "--type", "cash", "--money", "1", "--per-user", "-1", ...data], /--per-user/],
    [
      ["coupon", "create", "--type", "cash", "--money", "1", "--expire", "2031-02-30", ...data],
      /--expire: 过期时间格式应为 YYYY-MM-DD/,
    ],
    [["coupon", "create", "--type", "cash", "--money", "1", "--code", "WELCOME", ...data], /优惠券码已存在/],
    [
      ["coupon", "batch", "--type", "freeTime", "--days", "1", "--count", "0", ...data],
      /--count: 数量至少为 1/,
    ],
    [["coupon", "batch", "--type", "freeTime", "--days", "1", "--count", "1001", ...data], /--count/],
    [
      ["coupon", "batch", "--type", "freeTime", "--days", "x", "--count", "2", ...data],
      /--days must be a number/,
    ],
    [
      ["coupon", "batch", "--type", "freeTime", "--days", "1", "--count", "2", "--out", taken, ...data],
      /refusing to overwrite/,
    ],
  ]);
  expect(await couponCount()).toBe(before);
  expect(readFileSync(taken, "utf8")).toBe("keep\n");
});
