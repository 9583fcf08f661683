/**
 * `ferry user 2fa-reset <email>` (issue 30) as a real process: it turns two-factor login off for a
 * locked-out account in one transaction with its audit row, after which the password alone logs in.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { base32Decode, hotp, timeStep } from "../src/modules/user/totp.ts";
import type { TotpSetup } from "../src/modules/user/two-factor-schema.ts";
import { Code } from "../src/rpc/codes.ts";
import { ApiClient, loggedInClient, type TestServer, uniqueEmail } from "../tests/harness.ts";
import { expectHelp, type FerryIn, ferry, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli()));
afterAll(() => server?.close());

test("2fa-reset has --help", async () => {
  await expectHelp([
    [
      ["user", "2fa-reset"],
      ["<email>", "user.2fa_reset"],
    ],
  ]);
});

test("2fa-reset turns 2FA off with an audit row naming the operator; the password alone then logs in", async () => {
  const admin = await loggedInClient(server, { role: "admin", email: uniqueEmail("locked") });
  const setup = await admin.client.ok<TotpSetup>("/api/user/totp_setup");
  const code = hotp(base32Decode(setup.secret) as Buffer, timeStep(Date.now()));
  await admin.client.ok("/api/user/totp_enable", { code });
  const before = await new ApiClient(server.url).login(admin.email, admin.password);
  expect(before.code).toBe(Code.totpCodeNeeded);

  const out = await cli.ok(["user", "2fa-reset", admin.email.toUpperCase()]);
  expect(out).toContain(`two-factor login of ${admin.email} turned off`);
  const rows = await server.context.db.all<{ actor: string; action: string; target: string }>(
    "SELECT actor, action, target FROM audit_log WHERE action = 'user.2fa_reset'",
  );
  expect(rows.length).toBe(1);
  expect(rows[0]?.actor).toMatch(/^cli@/);
  expect(rows[0]?.target).toBe(admin.email);
  const after = await new ApiClient(server.url).login(admin.email, admin.password);
  expect(after.code).toBe(0);

  // Nothing to reset: said so, nothing audited; an unknown e-mail is an error.
  expect(await cli.ok(["user", "2fa-reset", admin.email])).toContain("was not on");
  const unknown = await ferry(cli.withData(["user", "2fa-reset", uniqueEmail("nobody")]));
  expect(unknown.code).not.toBe(0);
  expect(unknown.stderr).toContain("no account");
  expect(
    (await server.context.db.all("SELECT 1 FROM audit_log WHERE action = 'user.2fa_reset'")).length,
  ).toBe(1);
});
