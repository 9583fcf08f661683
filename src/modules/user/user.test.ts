/**
 * Accounts over real HTTP: sign-up, log-in, log-out, user info, recover-by-subscription-link and the
 * reset refusals that need no mail server (the mail flows are in confirm.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ApiClient,
  decodeAnswer,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { toBase64Json } from "../../rpc/envelope.ts";
import { sha256Hex } from "../../rpc/ids.ts";
import { transformPassword } from "./password.ts";
import type { UserRow } from "./row.ts";
import { DEFAULT_ICON, type Role, type UserInfo } from "./schema.ts";
import { createUser } from "./service.ts";

/** Every decoded answer any client in this file received, to look for leaked secrets at the end. */
const seenAnswers: string[] = [];

function remember(text: string) {
  try {
    const outer = JSON.parse(text) as { data?: unknown };
    seenAnswers.push(
      typeof outer.data === "string" ? Buffer.from(outer.data, "base64").toString("utf8") : text,
    );
  } catch {
    seenAnswers.push(text);
  }
}

class RecordingClient extends ApiClient {
  override async raw(path: string, body: string | undefined, headers: Record<string, string> = {}) {
    const response = await super.raw(path, body, headers);
    remember(await response.clone().text());
    return response;
  }

  override async get(path: string, headers: Record<string, string> = {}) {
    const response = await super.get(path, headers);
    remember(await response.clone().text());
    return response;
  }
}

let server: TestServer;
const PASSWORD = "correct-horse-1";

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function countUsers(email: string): Promise<number> {
  return (
    (await server.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM users WHERE email = ?", email))
      ?.n ?? -1
  );
}

/** An account made like `ferry user create` does, logged in through the API. */
async function account(role: Role = "normal") {
  const email = uniqueEmail(role);
  const user = await createUser(server.context, {
    email,
    passwordDigest: transformPassword(PASSWORD),
    type: role,
  });
  const client = new RecordingClient(server.url);
  const answer = await client.login(email, PASSWORD);
  expect(answer.code).toBe(0);
  return { client, user, email };
}

function tokenCookie(response: Response): string | undefined {
  return response.headers.getSetCookie().find((line) => line.startsWith("token="));
}

function subscriptionUrl(user: Pick<UserRow, "id" | "userkey">, client = "clash") {
  return `${server.url}/api/subscript/${client}/${user.id}/${user.userkey}`;
}

async function signupRaw(client: ApiClient, email: string, password: string) {
  const payload = { email, password, icon_url: "/logo.png", host: "127.0.0.1" };
  return client.raw("/api/user/signup", JSON.stringify({ data: toBase64Json(payload) }));
}

describe("/api/user/signup", () => {
  test("a new account answers 0, sets an HttpOnly session cookie and is logged in at once", async () => {
    const client = new RecordingClient(server.url);
    const email = uniqueEmail("signup");
    const response = await signupRaw(client, email, transformPassword(PASSWORD));
    const answer = await decodeAnswer<UserInfo>(response);
    expect(answer.code).toBe(0);
    expect(answer.data.email).toBe(email);
    expect(answer.data.type).toBe("normal");

    const cookie = tokenCookie(response);
    expect(cookie).toBeDefined();
    const attrs = (cookie ?? "").split(";").map((a) => a.trim().toLowerCase());
    expect(attrs).toContain("httponly");
    expect(attrs).toContain("samesite=lax");
    expect(attrs).toContain("path=/");
    const token = client.cookies.get("token") ?? "";
    expect(token).toMatch(/^[0-9a-f]{64}$/);

    const info = await client.call<UserInfo>("/api/user/userinfo");
    expect(info.code).toBe(0);
    expect(info.data._id).toBe(answer.data._id);
    // The icon is the default logo, whatever icon_url the client sent.
    expect(info.data.icon).toBe(DEFAULT_ICON);

    // The session is stored hashed: the raw token is nowhere in the database.
    const sessions = await server.context.db.all<{ token_hash: string }>(
      "SELECT token_hash FROM sessions WHERE user_id = ?",
      answer.data._id,
    );
    expect(sessions.map((s) => s.token_hash)).toEqual([sha256Hex(token)]);

    // The stored password is usable from another browser.
    const other = new RecordingClient(server.url);
    expect((await other.login(email, PASSWORD)).code).toBe(0);
  });

  test("the same e-mail again, in any letter case, is 1001 and creates nothing", async () => {
    const email = uniqueEmail("dup");
    const first = await new RecordingClient(server.url).call("/api/user/signup", {
      email,
      password: transformPassword(PASSWORD),
    });
    expect(first.code).toBe(0);
    for (const variant of [email, email.toUpperCase(), ` ${email.replace("dup", "DuP")} `]) {
      const again = await new RecordingClient(server.url).call("/api/user/signup", {
        email: variant,
        password: transformPassword("another-password"),
      });
      expect(again.code).toBe(1001);
      expect(again.msg).toBe("邮件已注册");
      expect(again.data).toBeNull();
    }
    expect(await countUsers(email)).toBe(1);
    // The first password still works: the failed sign-ups did not overwrite it.
    expect((await new RecordingClient(server.url).login(email, PASSWORD)).code).toBe(0);
  });

  test("two simultaneous sign-ups with one e-mail: exactly one succeeds", async () => {
    const email = uniqueEmail("race");
    const answers = await Promise.all(
      [0, 1].map(() =>
        new RecordingClient(server.url).call("/api/user/signup", {
          email,
          password: transformPassword(PASSWORD),
        }),
      ),
    );
    expect(answers.map((a) => a.code).sort()).toEqual([0, 1001]);
    expect(await countUsers(email)).toBe(1);
  });

  test("a malformed e-mail is 1000 with a message and creates nothing", async () => {
    for (const email of ["not-an-email", "a b@example.com", "@example.com", "x@y", ""]) {
      const answer = await new RecordingClient(server.url).call("/api/user/signup", {
        email,
        password: transformPassword(PASSWORD),
      });
      expect(answer.code).toBe(1000);
      expect(answer.msg.length).toBeGreaterThan(0);
      if (email) expect(await countUsers(email)).toBe(0);
    }
  });

  test("a password that is not the 64-hex digest is 1000 (the plain password is never accepted)", async () => {
    const email = uniqueEmail("plain");
    for (const password of [PASSWORD, "a".repeat(63), "g".repeat(64), "a".repeat(65), "", 12345678]) {
      const answer = await new RecordingClient(server.url).call("/api/user/signup", { email, password });
      expect(answer.code).toBe(1000);
    }
    expect(await countUsers(email)).toBe(0);
  });
});

test("an icon stored from elsewhere (older sign-ups kept icon_url) is shown as the default logo", async () => {
  const client = new RecordingClient(server.url);
  const email = uniqueEmail("icon");
  const answer = await decodeAnswer<UserInfo>(await signupRaw(client, email, transformPassword(PASSWORD)));
  await server.context.db.run(
    "UPDATE users SET icon = ? WHERE id = ?",
    "https://tracker.example/pixel.gif",
    answer.data._id,
  );
  const info = await client.call<UserInfo>("/api/user/userinfo");
  expect(info.data.icon).toBe(DEFAULT_ICON);
});

describe("/api/user/login", () => {
  test("right password: 0, HttpOnly cookie, user info; the e-mail's letter case does not matter", async () => {
    const { email } = await account();
    const client = new RecordingClient(server.url);
    const response = await client.raw(
      "/api/user/login",
      JSON.stringify({
        data: Buffer.from(
          JSON.stringify({ email: email.toUpperCase(), password: transformPassword(PASSWORD) }),
        ).toString("base64"),
      }),
    );
    const answer = await decodeAnswer<UserInfo>(response);
    expect(answer.code).toBe(0);
    expect(answer.data.email).toBe(email);
    expect(tokenCookie(response)?.toLowerCase()).toContain("httponly");
    expect((await client.call("/api/user/userinfo")).code).toBe(0);
  });

  test("wrong password and unknown user give the same 1000 用户不存在或密码错误 and no session", async () => {
    const { email } = await account();
    const wrong = new RecordingClient(server.url);
    const unknown = new RecordingClient(server.url);
    const a = await wrong.login(email, "wrong-password-1");
    const b = await unknown.login(uniqueEmail("nobody"), PASSWORD);
    for (const [answer, client] of [
      [a, wrong],
      [b, unknown],
    ] as const) {
      expect(answer.code).toBe(1000);
      expect(answer.msg).toBe("用户不存在或密码错误");
      expect(answer.data).toBeNull();
      expect(client.cookies.has("token")).toBe(false);
      expect((await client.call("/api/user/userinfo")).code).toBe(1002);
    }
  });

  test("a disabled account gets 1003 with the right password, and its open sessions stop working", async () => {
    const { client, user, email } = await account();
    await server.context.db.run("UPDATE users SET disabled = 1 WHERE id = ?", user.id);
    const fresh = new RecordingClient(server.url);
    const answer = await fresh.login(email, PASSWORD);
    expect(answer.code).toBe(1003);
    expect(fresh.cookies.has("token")).toBe(false);
    expect((await client.call("/api/user/userinfo")).code).toBe(1002);
    // A wrong password on a disabled account does not reveal that it exists.
    expect((await fresh.login(email, "wrong-password-1")).msg).toBe("用户不存在或密码错误");
  });
});

describe("/api/user/logout", () => {
  test("ends the session on the server: the old token is refused afterwards, other sessions live on", async () => {
    const { client, email } = await account();
    const second = new RecordingClient(server.url);
    expect((await second.login(email, PASSWORD)).code).toBe(0);
    const token = client.cookies.get("token") ?? "";
    expect(token).not.toBe("");

    const out = await client.call("/api/user/logout");
    expect(out.code).toBe(0);
    expect(client.cookies.has("token")).toBe(false);
    expect((await client.call("/api/user/userinfo")).code).toBe(1002);

    // Someone who kept a copy of the cookie gets nothing either.
    const copy = new RecordingClient(server.url);
    copy.cookies.set("token", token);
    expect((await copy.call("/api/user/userinfo")).code).toBe(1002);
    const rows = await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM sessions WHERE token_hash = ?",
      sha256Hex(token),
    );
    expect(rows?.n).toBe(0);

    expect((await second.call("/api/user/userinfo")).code).toBe(0);
  });

  test("a session presented as a Bearer token is ended by logout too", async () => {
    const { client } = await account();
    const token = client.cookies.get("token") ?? "";
    const bearer = new RecordingClient(server.url);
    const auth = { authorization: `Bearer ${token}` };
    expect((await decodeAnswer(await bearer.raw("/api/user/userinfo", "", auth))).code).toBe(0);
    expect((await decodeAnswer(await bearer.raw("/api/user/logout", "", auth))).code).toBe(0);
    expect((await decodeAnswer(await bearer.raw("/api/user/userinfo", "", auth))).code).toBe(1002);
    expect((await client.call("/api/user/userinfo")).code).toBe(1002);
  });

  test("logging out without a session is harmless", async () => {
    expect((await new RecordingClient(server.url).call("/api/user/logout")).code).toBe(0);
  });
});

describe("/api/user/userinfo", () => {
  test("a visitor gets 1002", async () => {
    const answer = await new RecordingClient(server.url).call("/api/user/userinfo");
    expect(answer.code).toBe(1002);
    expect(answer.data).toBeNull();
    expect(answer.msg.length).toBeGreaterThan(0);
  });

  test("carries every field of the seed's user info with the right types", async () => {
    const { client, user, email } = await account("channel");
    const answer = await client.call<Record<string, unknown>>("/api/user/userinfo");
    expect(answer.code).toBe(0);
    const info = answer.data;
    const fields: Record<string, string> = {
      _id: "string",
      email: "string",
      icon: "string",
      type: "string",
      is_agency_user: "boolean",
      userkey: "string",
      paidUser: "boolean",
      traffic: "number",
      spendTraffic: "number",
      vipExpireTime: "number",
      dailyTimePackageUsage: "number",
      limit: "number",
      haveContinueSignUseData: "boolean",
      signUseToday: "boolean",
      preferDomain: "string",
      permissions: "object",
      signUseRewardInfo: "object",
      channel_code: "string",
      inXinjiang: "boolean",
      in_foreign: "boolean",
      use_english_node: "boolean",
      describe_host: "string",
    };
    for (const [field, type] of Object.entries(fields)) {
      expect({ field, type: typeof info[field] as string }).toEqual({ field, type });
    }
    expect(info._id).toBe(user.id);
    expect(info._id).toMatch(/^[0-9a-f]{24}$/);
    expect(info.email).toBe(email);
    expect(info.type).toBe("channel");
    expect(info.userkey).toBe(user.userkey);
    expect(Array.isArray(info.permissions)).toBe(true);
    expect(typeof (info.signUseRewardInfo as { continueSignReward: unknown }).continueSignReward).toBe(
      "number",
    );
    // Default daily time-package limit is 50 GB (seed 000 §9).
    expect(info.limit).toBe(50 * 1024 ** 3);
  });

  test("the settings lists admin_id / yunying_list raise the role shown: by id, or by e-mail once it is confirmed", async () => {
    const { client, user } = await account();
    const info = async () => (await client.call<UserInfo>("/api/user/userinfo")).data.type;
    await server.context.settings.update({ yunying_list: [user.email.toUpperCase()] });
    expect(await info()).toBe("normal");
    await server.context.db.run("UPDATE users SET email_verified = 1 WHERE id = ?", user.id);
    expect(await info()).toBe("yunying");
    await server.context.settings.update({ admin_id: [user.id] });
    expect(await info()).toBe("admin");
    await server.context.settings.update({ admin_id: [], yunying_list: [] });
    expect(await info()).toBe("normal");
  });
});

describe("/api/user/get_email", () => {
  test("a subscription link gives its owner's e-mail, in any client form", async () => {
    const { user, email } = await account();
    for (const link of [subscriptionUrl(user), `${subscriptionUrl(user, "singbox")}?name=x`]) {
      const answer = await new RecordingClient(server.url).call("/api/user/get_email", { describUrl: link });
      expect(answer.code).toBe(0);
      expect(answer.data).toBe(email);
    }
  });

  test("not a link → DESCRIBE_URL_ERROR; wrong key or stale link → USER_NOT_EXIST", async () => {
    const { user } = await account();
    const client = new RecordingClient(server.url);
    for (const describUrl of ["hello world", "https://example.com/", ""]) {
      const answer = await client.call("/api/user/get_email", { describUrl });
      expect(answer.code).not.toBe(0);
      expect(answer.msg).toBe("DESCRIBE_URL_ERROR");
    }
    const wrongKey = subscriptionUrl({ id: user.id, userkey: "0".repeat(32) });
    const a = await client.call("/api/user/get_email", { describUrl: wrongKey });
    expect(a.code).not.toBe(0);
    expect(a.msg).toBe("USER_NOT_EXIST");
    expect(a.data).toBeNull();

    // After the subscription is reset the old link no longer names anyone.
    const oldLink = subscriptionUrl(user);
    await server.context.db.run("UPDATE users SET userkey = ? WHERE id = ?", "1".repeat(32), user.id);
    expect((await client.call("/api/user/get_email", { describUrl: oldLink })).msg).toBe("USER_NOT_EXIST");
  });
});

describe("/api/user/reset_password without mail", () => {
  test("refusals: bad link, wrong key, e-mail mismatch, 1033 account, and no SMTP configured", async () => {
    const { user, email } = await account();
    const other = await account();
    const client = new RecordingClient(server.url);
    const reset = (describUrl: string, forEmail = email) =>
      client.call("/api/user/reset_password", {
        email: forEmail,
        password: transformPassword("brand-new-password"),
        describUrl,
      });

    const bad = await reset("https://example.com/not-a-subscription");
    expect(bad.code).not.toBe(0);
    expect(bad.msg).toBe("DESCRIBE_URL_ERROR");

    const wrongKey = await reset(subscriptionUrl({ id: user.id, userkey: "f".repeat(32) }));
    expect(wrongKey.code).not.toBe(0);
    expect(wrongKey.msg).toBe("USER_NOT_EXIST");

    const mismatch = await reset(subscriptionUrl(user), other.email);
    expect(mismatch.code).toBe(1000);
    expect(mismatch.msg).not.toBe("DESCRIBE_URL_ERROR");
    expect(mismatch.msg).not.toBe("USER_NOT_EXIST");

    await server.context.db.run("UPDATE users SET can_change_password = 0 WHERE id = ?", user.id);
    const refused = await reset(subscriptionUrl(user));
    expect(refused.code).toBe(1033);
    await server.context.db.run("UPDATE users SET can_change_password = 1 WHERE id = ?", user.id);

    // No SMTP server is configured on this server: a clear refusal, not a silent success.
    expect(await server.context.mailer.configured()).toBe(false);
    const noMail = await reset(subscriptionUrl(user));
    expect(noMail.code).not.toBe(0);
    expect(noMail.code).not.toBe(999);
    expect(noMail.msg).toContain("邮件");

    // Nothing changed: the old password still works, the new one does not, no link was stored.
    expect((await new RecordingClient(server.url).login(email, PASSWORD)).code).toBe(0);
    expect((await new RecordingClient(server.url).login(email, "brand-new-password")).code).toBe(1000);
    const links = await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM email_tokens WHERE user_id = ?",
      user.id,
    );
    expect(links?.n).toBe(0);
  });

  test("a password that is not a digest is 1000", async () => {
    const { user, email } = await account();
    const answer = await new RecordingClient(server.url).call("/api/user/reset_password", {
      email,
      password: "brand-new-password",
      describUrl: subscriptionUrl(user),
    });
    expect(answer.code).toBe(1000);
  });
});

describe("confirm links without a valid key", () => {
  test("unknown, malformed or missing serial_id/key are refused with a non-zero Code", async () => {
    const client = new RecordingClient(server.url);
    for (const action of ["signup_confirm", "change_password"]) {
      for (const query of [
        `serial_id=${"a".repeat(24)}&key=${"b".repeat(64)}`,
        "serial_id=xyz&key=abc",
        "",
        `serial_id=${"a".repeat(24)}`,
      ]) {
        const response = await client.get(`/api/account/${action}?${query}`);
        expect(response.status).toBe(200);
        const body = (await response.json()) as { Code: number; msg: string };
        expect(body.Code).not.toBe(0);
        expect(typeof body.msg).toBe("string");
      }
    }
  });
});

test("every other call a user or an admin can make answers without secrets (checked below)", async () => {
  const { client } = await account();
  const admin = await account("admin");
  for (const path of [
    "/api/user/userinfo",
    "/api/permission/mypermissions",
    "/api/user_notive/list",
    "/api/host/get",
  ]) {
    expect((await client.call(path)).code).toBe(0);
  }
  for (const path of [
    "/api/user/userinfo",
    "/api/admin/config/get",
    "/api/admin/errors/list",
    "/api/admin/config/set_config",
  ]) {
    expect((await admin.client.call(path)).code).toBe(0);
  }
});

test("no answer in this file ever carried a password hash or a proxy secret", async () => {
  const users = await server.context.db.all<{ password_hash: string; proxy_secret: string }>(
    "SELECT password_hash, proxy_secret FROM users",
  );
  expect(users.length).toBeGreaterThan(10);
  expect(seenAnswers.length).toBeGreaterThan(50);
  for (const text of seenAnswers) {
    expect(text).not.toContain("$argon2");
    expect(text).not.toContain("password_hash");
    expect(text).not.toContain("proxy_secret");
    for (const user of users) {
      expect(text).not.toContain(user.password_hash);
      expect(text).not.toContain(user.proxy_secret);
    }
  }
});
