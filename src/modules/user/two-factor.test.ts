/**
 * Two-factor login (issue 30) over real HTTP: enrolment with a code, login in two steps (1040 and
 * a challenge, no session until the code), a code used once (replay refused), recovery codes used
 * once, turning it off, wrong codes counted toward the login limits, a challenge's expiry and
 * tries, the mandatory mode for staff, and the login paths that must not skip the code.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ApiClient,
  loggedInClient,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { confirmLinkOf, type MailSink, sinkSettings, startMailSink } from "../../../tests/mail-sink.ts";
import { SoftAuthenticator } from "../../../tests/soft-authenticator.ts";
import { Code } from "../../rpc/codes.ts";
import { transformPassword } from "./password.ts";
import { Msg, type UserInfo } from "./schema.ts";
import { findUserById } from "./service.ts";
import { mintLoginLink } from "./session.ts";
import { base32Decode, hotp, timeStep } from "./totp.ts";
import { CHALLENGE_TRIES } from "./two-factor.ts";
import {
  type LoginChallenge,
  type PasskeyCreationOptions,
  RECOVERY_CODE_COUNT,
  TotpMsg,
  type TotpSetup,
  type TotpStatus,
} from "./two-factor-schema.ts";

let server: TestServer;
let sink: MailSink;

beforeAll(async () => {
  // The login limits as deployed (10 failures per account, 30 per address in 10 minutes).
  server = await startTestServer({ rateLimitScale: 1 });
  sink = await startMailSink();
  await server.context.settings.update(sinkSettings(sink));
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

/** The code an authenticator shows now (`offset` steps from now: 1 is the next one). */
function codeOf(secret: string, offset = 0): string {
  return hotp(base32Decode(secret) as Buffer, timeStep(Date.now()) + offset);
}

interface Enrolled {
  client: ApiClient;
  email: string;
  password: string;
  userId: string;
  secret: string;
  otpauthUrl: string;
  recoveryCodes: string[];
}

/** A new account that turned 2FA on through the calls (its code of the current step is used). */
async function enrolled(role: "normal" | "admin" = "normal"): Promise<Enrolled> {
  const account = await loggedInClient(server, { role, email: uniqueEmail("totp") });
  const setup = await account.client.ok<TotpSetup>("/api/user/totp_setup");
  const { recoveryCodes } = await account.client.ok<{ recoveryCodes: string[] }>("/api/user/totp_enable", {
    code: codeOf(setup.secret),
  });
  return { ...account, userId: account.user.id, ...setup, recoveryCodes };
}

/** The password step from a fresh client: answers the client and the 1040 answer. */
async function passwordStep(
  account: { email: string; password: string },
  client = new ApiClient(server.url),
) {
  const answer = await client.login(account.email, account.password);
  return { client, answer: answer as { code: number; msg: string; data: LoginChallenge | null } };
}

const auditRows = (target: string) =>
  server.context.db.all<{ actor: string; action: string; target: string }>(
    "SELECT actor, action, target FROM audit_log WHERE target = ? ORDER BY id",
    target,
  );

describe("enrolment", () => {
  test("setup gives a secret and its otpauth URL; only a right code turns 2FA on, with ten recovery codes", async () => {
    const { client, email, user } = await loggedInClient(server, { email: uniqueEmail("totp") });
    expect(await client.ok<TotpStatus>("/api/user/totp_status")).toEqual({
      enabled: false,
      required: false,
      recoveryCodesLeft: 0,
      passkeys: 0,
    });
    expect((await client.call("/api/user/totp_enable", { code: "123456" })).msg).toBe(TotpMsg.notSetUp);
    const setup = await client.ok<TotpSetup>("/api/user/totp_setup");
    expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(setup.otpauthUrl);
    expect([url.protocol, url.host, decodeURIComponent(url.pathname)]).toEqual([
      "otpauth:",
      "totp",
      `/飞渡:${email}`,
    ]);
    expect(url.searchParams.get("secret")).toBe(setup.secret);
    expect(url.searchParams.get("issuer")).toBe("飞渡");

    const wrong = codeOf(setup.secret, 5);
    const refused = await client.call("/api/user/totp_enable", { code: wrong });
    expect([refused.code, refused.msg]).toEqual([Code.badInput, TotpMsg.wrongCode]);
    expect((await client.ok<TotpStatus>("/api/user/totp_status")).enabled).toBe(false);

    const { recoveryCodes } = await client.ok<{ recoveryCodes: string[] }>("/api/user/totp_enable", {
      code: codeOf(setup.secret),
    });
    expect(recoveryCodes.length).toBe(RECOVERY_CODE_COUNT);
    expect(new Set(recoveryCodes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    expect(await client.ok<TotpStatus>("/api/user/totp_status")).toEqual({
      enabled: true,
      required: false,
      recoveryCodesLeft: 10,
      passkeys: 0,
    });
    // Stored hashed: no code appears in the database as given.
    const stored = await server.context.db.all<{ code_hash: string }>(
      "SELECT code_hash FROM totp_recovery_codes WHERE user_id = ?",
      user.id,
    );
    expect(stored.length).toBe(10);
    for (const code of recoveryCodes) expect(JSON.stringify(stored)).not.toContain(code.replace("-", ""));
    // Shown once: setup now refuses (no new secret, no new codes) while 2FA is on.
    expect((await client.call("/api/user/totp_setup")).msg).toBe(TotpMsg.alreadyOn);
    expect(await auditRows(email)).toEqual([{ actor: email, action: "user.2fa_enable", target: email }]);
  });
});

describe("login", () => {
  test("an enrolled account gets 1040 and a challenge without a session; the code then logs in as login does", async () => {
    const account = await enrolled();
    const { client, answer } = await passwordStep(account);
    expect([answer.code, answer.msg]).toEqual([Code.totpCodeNeeded, TotpMsg.codeNeeded]);
    expect(answer.data?.challenge).toMatch(/^[0-9a-f]{64}$/);
    expect(client.cookies.has("token")).toBe(false);
    expect((await client.call("/api/user/userinfo")).code).toBe(Code.notLoggedIn);

    const done = await client.call<UserInfo>("/api/user/login_totp", {
      challenge: answer.data?.challenge,
      code: codeOf(account.secret, 1),
    });
    expect([done.code, done.data.email, done.data._id]).toEqual([0, account.email, account.userId]);
    expect(client.cookies.has("token")).toBe(true);
    expect(client.cookies.has(`device_${account.userId}`)).toBe(true);
    expect((await client.ok<UserInfo>("/api/user/userinfo")).email).toBe(account.email);
  });

  test("a code is used once: replayed (or an earlier step's) it is refused, and the challenge survives the refusal", async () => {
    const account = await enrolled();
    const code = codeOf(account.secret, 1);
    const first = await passwordStep(account);
    const challenge = first.answer.data?.challenge;
    expect((await first.client.call("/api/user/login_totp", { challenge, code })).code).toBe(0);

    const second = await passwordStep(account);
    const again = second.answer.data?.challenge;
    const replay = await second.client.call("/api/user/login_totp", { challenge: again, code });
    expect([replay.code, replay.msg]).toEqual([Code.badInput, TotpMsg.wrongCode]);
    // The step before the used one is within the drift window but older than what was used.
    const older = await second.client.call("/api/user/login_totp", {
      challenge: again,
      code: codeOf(account.secret, 0),
    });
    expect([older.code, older.msg]).toEqual([Code.badInput, TotpMsg.wrongCode]);
    expect(second.client.cookies.has("token")).toBe(false);
    // The same challenge still takes a recovery code: the refusals used nothing up.
    const recovered = await second.client.call("/api/user/login_totp", {
      challenge: again,
      code: account.recoveryCodes[0],
    });
    expect(recovered.code).toBe(0);
  });

  test("a recovery code logs in once; spaces and capitals are forgiven", async () => {
    const account = await enrolled();
    const [recovery = ""] = account.recoveryCodes;
    const typed = ` ${recovery.toUpperCase().replace("-", " - ")} `;
    const first = await passwordStep(account);
    const ok = await first.client.call("/api/user/login_totp", {
      challenge: first.answer.data?.challenge,
      code: typed,
    });
    expect(ok.code).toBe(0);
    expect((await first.client.ok<TotpStatus>("/api/user/totp_status")).recoveryCodesLeft).toBe(9);

    const second = await passwordStep(account);
    const reused = await second.client.call("/api/user/login_totp", {
      challenge: second.answer.data?.challenge,
      code: recovery,
    });
    expect([reused.code, reused.msg]).toEqual([Code.badInput, TotpMsg.wrongCode]);
  });

  test("a challenge expires, dies after its tries, and works once", async () => {
    const account = await enrolled();
    const stale = await passwordStep(account);
    await server.context.db.run(
      "UPDATE login_challenges SET expire_time = ? WHERE user_id = ?",
      Date.now() - 1,
      account.userId,
    );
    const late = await stale.client.call("/api/user/login_totp", {
      challenge: stale.answer.data?.challenge,
      code: codeOf(account.secret, 1),
    });
    expect([late.code, late.msg]).toEqual([Code.badInput, TotpMsg.challengeExpired]);

    const fresh = await passwordStep(account);
    const challenge = fresh.answer.data?.challenge;
    expect(
      (await fresh.client.call("/api/user/login_totp", { challenge, code: codeOf(account.secret, 1) })).code,
    ).toBe(0);
    const twice = await fresh.client.call("/api/user/login_totp", {
      challenge,
      code: account.recoveryCodes[1],
    });
    expect([twice.code, twice.msg]).toEqual([Code.badInput, TotpMsg.challengeExpired]);
    const unknown = await fresh.client.call("/api/user/login_totp", {
      challenge: "ab".repeat(32),
      code: "123456",
    });
    expect([unknown.code, unknown.msg]).toEqual([Code.badInput, TotpMsg.challengeExpired]);
  });

  test(`wrong codes count toward the login limits; a challenge dies after ${CHALLENGE_TRIES} wrong codes`, async () => {
    const account = await enrolled();
    const wrongCode = (n: number) =>
      String((Number(codeOf(account.secret, 3)) + n) % 1_000_000).padStart(6, "0");
    const first = await passwordStep(account);
    for (let i = 0; i < CHALLENGE_TRIES; i++) {
      const answer = await first.client.call("/api/user/login_totp", {
        challenge: first.answer.data?.challenge,
        code: wrongCode(i),
      });
      expect([answer.code, answer.msg]).toEqual([Code.badInput, TotpMsg.wrongCode]);
    }
    const dead = await first.client.call("/api/user/login_totp", {
      challenge: first.answer.data?.challenge,
      code: codeOf(account.secret, 1),
    });
    expect([dead.code, dead.msg]).toEqual([Code.badInput, TotpMsg.challengeExpired]);

    // Five more wrong codes on a new challenge make ten failures: the account's login limit.
    const second = await passwordStep(account);
    expect(second.answer.code).toBe(Code.totpCodeNeeded);
    for (let i = 0; i < 5; i++) {
      const answer = await second.client.call("/api/user/login_totp", {
        challenge: second.answer.data?.challenge,
        code: wrongCode(10 + i),
      });
      expect(answer.code).toBe(Code.badInput);
    }
    const blocked = await passwordStep(account);
    expect([blocked.answer.code, blocked.answer.msg]).toEqual([
      Code.tooManyRequests,
      Msg.tooManyLoginFailures,
    ]);
  });

  test("a login link does not open an enrolled account without its code (the link is used up)", async () => {
    const account = await enrolled();
    const visitor = new ApiClient(server.url);
    const response = await visitor.get(`/?token=${await mintLoginLink(server.context, account.userId)}`);
    expect(response.status).toBe(302);
    expect(visitor.cookies.has("token")).toBe(false);
    expect(
      await server.context.db.get("SELECT 1 AS used FROM login_tokens WHERE user_id = ?", account.userId),
    ).toBeNull();
  });
});

test("a confirmed password reset changes the password but opens no session; the new password then needs the code", async () => {
  const account = await enrolled();
  const user = await findUserById(server.context, account.userId);
  const visitor = new ApiClient(server.url);
  await visitor.ok("/api/user/reset_password", {
    email: account.email,
    password: transformPassword("brand-new-pass-2"),
    describUrl: `${server.url}/api/subscript/clash/${user?.id}/${user?.userkey}`,
  });
  const link = confirmLinkOf(await sink.waitFor(account.email));
  const response = await visitor.raw(
    "/api/account/change_password",
    JSON.stringify({
      serial_id: link.serialId,
      key: link.key,
      password: transformPassword("brand-new-pass-2"),
    }),
  );
  expect(await response.json()).toEqual({ Code: 0, msg: "ok" });
  expect(visitor.cookies.has("token")).toBe(false);
  const { answer } = await passwordStep({ email: account.email, password: "brand-new-pass-2" });
  expect(answer.code).toBe(Code.totpCodeNeeded);
});

describe("turning it off", () => {
  test("needs a right TOTP or recovery code; then login is one step again", async () => {
    const account = await enrolled();
    const wrong = await account.client.call("/api/user/totp_disable", { code: codeOf(account.secret, 4) });
    expect([wrong.code, wrong.msg]).toEqual([Code.badInput, TotpMsg.wrongCode]);
    await account.client.ok("/api/user/totp_disable", { code: account.recoveryCodes[2] });
    expect(await account.client.ok<TotpStatus>("/api/user/totp_status")).toEqual({
      enabled: false,
      required: false,
      recoveryCodesLeft: 0,
      passkeys: 0,
    });
    const again = await account.client.call("/api/user/totp_disable", { code: codeOf(account.secret, 1) });
    expect(again.msg).toBe(TotpMsg.notOn);
    const { answer } = await passwordStep(account);
    expect(answer.code).toBe(0);
    expect((await auditRows(account.email)).map((row) => [row.actor, row.action])).toEqual([
      [account.email, "user.2fa_enable"],
      [account.email, "user.2fa_disable"],
    ]);
  });

  test("with a TOTP code too", async () => {
    const account = await enrolled();
    await account.client.ok("/api/user/totp_disable", { code: codeOf(account.secret, 1) });
    expect((await account.client.ok<TotpStatus>("/api/user/totp_status")).enabled).toBe(false);
  });
});

describe("mandatory for staff (totp_required_staff)", () => {
  test("an un-enrolled admin gets 1041 on every other call until enrolled; customers are not affected", async () => {
    const admin = await loggedInClient(server, { role: "admin", email: uniqueEmail("staff") });
    const yunying = await loggedInClient(server, { role: "yunying", email: uniqueEmail("staff") });
    const customer = await loggedInClient(server, { email: uniqueEmail("cust") });
    expect((await admin.client.call("/api/admin/config/get")).code).toBe(0);
    await server.context.settings.update({ totp_required_staff: true });
    try {
      for (const path of ["/api/admin/config/get", "/api/admin/users/userlist", "/api/order/order_list"]) {
        const refused = await admin.client.call(path, path.endsWith("userlist") ? { number: 10 } : {});
        expect([path, refused.code, refused.msg]).toEqual([
          path,
          Code.totpEnrolmentNeeded,
          TotpMsg.enrolFirst,
        ]);
      }
      const yunyingRefused = await yunying.client.call("/api/yunying/coupon/coupon_list");
      expect(yunyingRefused.code).toBe(Code.totpEnrolmentNeeded);
      expect((await admin.client.ok<UserInfo>("/api/user/userinfo")).mustEnrolTotp).toBe(true);
      expect((await admin.client.ok<TotpStatus>("/api/user/totp_status")).required).toBe(true);
      // Public calls stay open, and customers see nothing of it.
      expect((await admin.client.call("/api/host/get")).code).toBe(0);
      expect((await customer.client.ok<UserInfo>("/api/user/userinfo")).mustEnrolTotp).toBe(false);
      expect((await customer.client.call("/api/order/order_list")).code).toBe(0);

      const setup = await admin.client.ok<TotpSetup>("/api/user/totp_setup");
      await admin.client.ok("/api/user/totp_enable", { code: codeOf(setup.secret) });
      expect((await admin.client.call("/api/admin/config/get")).code).toBe(0);
      expect((await admin.client.ok<UserInfo>("/api/user/userinfo")).mustEnrolTotp).toBe(false);
      expect((await yunying.client.call("/api/yunying/coupon/coupon_list")).code).toBe(
        Code.totpEnrolmentNeeded,
      );
      // Logout is open too.
      expect((await yunying.client.call("/api/user/logout")).code).toBe(0);
    } finally {
      await server.context.settings.update({ totp_required_staff: false });
    }
  });
});

describe("passkeys (WebAuthn) as another second factor", () => {
  /** An enrolled account with a passkey added through the calls, from a software authenticator. */
  async function withPasskey() {
    const account = await enrolled();
    const authenticator = new SoftAuthenticator(server.url);
    const options = await account.client.ok<PasskeyCreationOptions>("/api/user/passkey_options");
    expect(options.rp).toEqual({ id: "127.0.0.1", name: "飞渡" });
    expect(options.user.name).toBe(account.email);
    await account.client.ok("/api/user/passkey_add", authenticator.create(options.challenge));
    return { account, authenticator };
  }

  test("added while TOTP is on (audited); refused without TOTP or with a challenge not issued", async () => {
    const { client } = await loggedInClient(server, { email: uniqueEmail("pk") });
    expect((await client.call("/api/user/passkey_options")).msg).toBe(TotpMsg.notOn);
    const { account, authenticator } = await withPasskey();
    expect((await account.client.ok<TotpStatus>("/api/user/totp_status")).passkeys).toBe(1);
    expect((await auditRows(account.email)).map((row) => row.action)).toEqual([
      "user.2fa_enable",
      "user.passkey_add",
    ]);
    // A creation for a challenge the server did not issue (or one already used) is refused.
    const forged = await account.client.call("/api/user/passkey_add", authenticator.create("AAAA"));
    expect([forged.code, forged.msg]).toEqual([Code.badInput, TotpMsg.passkeyFailed]);
  });

  test("logs in as login does; an assertion replayed or for another origin is refused", async () => {
    const { account, authenticator } = await withPasskey();
    const first = await passwordStep(account);
    const data = first.answer.data as LoginChallenge;
    expect(data.passkeys).toEqual([authenticator.credentialId.toString("base64url")]);
    const assertion = authenticator.get(data.passkeyChallenge);
    const done = await first.client.call<UserInfo>("/api/user/login_passkey", {
      challenge: data.challenge,
      ...assertion,
    });
    expect([done.code, done.data.email]).toEqual([0, account.email]);
    expect(first.client.cookies.has("token")).toBe(true);

    const second = await passwordStep(account);
    const again = second.answer.data as LoginChallenge;
    const replayed = await second.client.call("/api/user/login_passkey", {
      challenge: again.challenge,
      ...assertion,
    });
    expect([replayed.code, replayed.msg]).toEqual([Code.badInput, TotpMsg.passkeyFailed]);
    const elsewhere = new SoftAuthenticator("https://phish.example", "127.0.0.1");
    const phished = await second.client.call("/api/user/login_passkey", {
      challenge: again.challenge,
      ...elsewhere.get(again.passkeyChallenge),
      credentialId: assertion.credentialId,
    });
    expect(phished.code).toBe(Code.badInput);
    const ok = await second.client.call("/api/user/login_passkey", {
      challenge: again.challenge,
      ...authenticator.get(again.passkeyChallenge),
    });
    expect(ok.code).toBe(0);
  });

  test("turning TOTP off removes the passkeys", async () => {
    const { account } = await withPasskey();
    await account.client.ok("/api/user/totp_disable", { code: codeOf(account.secret, 1) });
    expect(
      await server.context.db.get("SELECT 1 AS left FROM passkeys WHERE user_id = ?", account.userId),
    ).toBeNull();
  });
});
