/**
 * `ferry user list|show|disable|enable|adjust` (issue 16 §6), run as real processes against the
 * data directory of a running server: they do what /admin_userlist does, with the same refusals.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { GB } from "../src/lib/traffic.ts";
import type { AdminUser } from "../src/modules/user/admin-schema.ts";
import { Code } from "../src/rpc/codes.ts";
import { loggedInClient, type TestServer, uniqueEmail } from "../tests/harness.ts";
import { expectHelp, expectOneLineError, type FerryIn, ferry, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli()));
afterAll(() => server?.close());

const counts = async (userId: string) =>
  await server.context.db.get(
    `SELECT (SELECT COUNT(*) FROM traffic_records WHERE user_id = ?1) AS traffic,
              (SELECT COUNT(*) FROM wallet_entries WHERE user_id = ?1) AS wallet,
              (SELECT COUNT(*) FROM admin_adjustments WHERE user_id = ?1) AS audit`,
    userId,
  );

test("every new user command has --help", async () => {
  await expectHelp([
    [["user"], ["list", "show", "disable", "enable", "adjust", "set-password"]],
    [
      ["user", "list"],
      ["--filter", "--since", "--number", "--json"],
    ],
    [["user", "show"], ["<email>"]],
    [["user", "disable"], ["<email>"]],
    [["user", "enable"], ["<email>"]],
    [
      ["user", "adjust"],
      ["<email>", "--traffic-g", "--days", "--wallet", "--reason"],
    ],
  ]);
});

test("list filters by e-mail and by sign-up day; show prints one account", async () => {
  const customer = await loggedInClient(server, { email: uniqueEmail("clilist") });
  const old = await loggedInClient(server, { email: uniqueEmail("clilist") });
  await server.context.db.run(
    "UPDATE users SET create_time = ? WHERE id = ?",
    Date.parse("2020-01-01T12:00:00Z"),
    old.user.id,
  );
  const listed = await cli.json<AdminUser[]>(["user", "list", "--filter", "CLILIST"]);
  expect(listed.map((u) => u.email)).toEqual([customer.email, old.email]);
  expect(JSON.stringify(listed)).not.toContain(customer.user.proxy_secret);
  const recent = await cli.json<AdminUser[]>([
    "user",
    "list",
    "--filter",
    "clilist",
    "--since",
    "2021-01-01",
  ]);
  expect(recent.map((u) => u.email)).toEqual([customer.email]);
  expect(await cli.ok(["user", "list", "--filter", "clilist"])).toContain(old.email);
  const shown = await cli.ok(["user", "show", customer.email]);
  expect(shown).toContain(customer.user.id);
  expect(shown).toContain("active");
});

test("adjust adds 10 G with a reason: one ledger row and one audit row; refusals change nothing", async () => {
  const customer = await loggedInClient(server);
  const adjusted = await cli.json<AdminUser>([
    "user",
    "adjust",
    customer.email,
    "--traffic-g",
    "10",
    "--reason",
    "补偿",
  ]);
  expect(adjusted.traffic).toBe(10 * GB);
  expect(await counts(customer.user.id)).toEqual({ traffic: 1, wallet: 0, audit: 1 });
  const audit = await server.context.db.get(
    "SELECT admin_id, reason FROM admin_adjustments WHERE user_id = ?",
    customer.user.id,
  );
  expect(audit).toEqual({ admin_id: "cli", reason: "补偿" });

  const refusals: [string[], RegExp][] = [
    [["--traffic-g", "-11", "--reason", "x"], /流量/],
    [["--wallet", "-1", "--reason", "x"], /余额/],
    [["--days", "1.5", "--reason", "x"], /--days/],
    [["--traffic-g", "abc", "--reason", "x"], /--traffic-g must be a number/],
    [["--reason", "x"], /--traffic-g, --days or --wallet/],
    [["--traffic-g", "1", "--reason", " "], /--reason/],
  ];
  for (const [args, mentions] of refusals) {
    expectOneLineError(await ferry(cli.withData(["user", "adjust", customer.email, ...args])), mentions);
  }
  expectOneLineError(
    await ferry(cli.withData(["user", "adjust", customer.email, "--traffic-g", "1"])),
    /--reason/,
  );
  expectOneLineError(
    await ferry(cli.withData(["user", "adjust", "nobody@example.com", "--traffic-g", "1", "--reason", "x"])),
    /nobody@example.com/,
  );
  expect(await counts(customer.user.id)).toEqual({ traffic: 1, wallet: 0, audit: 1 });
});

test("disable signs the customer out at once and refuses their login; enable lets them in again", async () => {
  const customer = await loggedInClient(server);
  expect(await cli.ok(["user", "disable", customer.email])).toContain("disabled");
  expect((await customer.client.call("/api/user/userinfo")).code).toBe(Code.notLoggedIn);
  expect((await customer.client.login(customer.email, customer.password)).code).toBe(Code.forbidden);
  expect(await cli.ok(["user", "enable", customer.email])).toContain("enabled");
  expect((await customer.client.login(customer.email, customer.password)).code).toBe(0);
  expectOneLineError(
    await ferry(cli.withData(["user", "disable", "nobody@example.com"])),
    /nobody@example.com/,
  );
});
