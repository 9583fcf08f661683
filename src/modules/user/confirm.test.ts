/**
 * The e-mail flows end to end: a real SMTP sink on 127.0.0.1, the SMTP settings made through the
 * admin API, the mail read and its link used as the confirm page does: GET
 * /api/account/signup_confirm, and POST /api/account/change_password with the new password typed
 * again. (The takeover chain of issue 11 is replayed in tests/security-auth.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { createServer } from "node:net";
import {
  ApiClient,
  decodeAnswer,
  loggedInClient,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { confirmLinkOf, type MailSink, startMailSink } from "../../../tests/mail-sink.ts";
import { toBase64Json } from "../../rpc/envelope.ts";
import type { Settings } from "../settings/schema.ts";
import { transformPassword } from "./password.ts";
import type { UserRow } from "./row.ts";

const SMTP_USER = "ferry-mailer";
const SMTP_PASSWORD = "smtp-secret-Zq7";
const FROM = "noreply@ferry.test";

let server: TestServer;
let sink: MailSink;
let admin: ApiClient;

async function openLink(action: string, serialId: string, key: string) {
  const response = await new ApiClient(server.url).get(
    `/api/account/${action}?serial_id=${serialId}&key=${key}`,
  );
  expect(response.status).toBe(200);
  return (await response.json()) as { Code: number; msg: string };
}

/** What the confirm page sends once the new password was typed again. */
async function typeAgain(
  serialId: string,
  key: string,
  password: string,
  client = new ApiClient(server.url),
) {
  const response = await client.raw(
    "/api/account/change_password",
    JSON.stringify({ serial_id: serialId, key, password: transformPassword(password) }),
  );
  expect(response.status).toBe(200);
  return (await response.json()) as { Code: number; msg: string };
}

async function user(email: string): Promise<UserRow> {
  const row = await server.context.db.get<UserRow>("SELECT * FROM users WHERE email = ?", email);
  if (!row) throw new Error(`no user ${email}`);
  return row;
}

async function signup(email: string, password: string) {
  const client = new ApiClient(server.url);
  const answer = await client.call("/api/user/signup", { email, password: transformPassword(password) });
  expect(answer.code).toBe(0);
  return client;
}

async function setConfig(patch: Partial<Record<keyof Settings, unknown>>) {
  const answer = await admin.call<Settings>("/api/admin/config/set_config", patch);
  expect(answer.code).toBe(0);
  return answer.data;
}

/** A loopback port nothing listens on: an SMTP server that is down. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  server = await startTestServer();
  sink = await startMailSink({ user: SMTP_USER, password: SMTP_PASSWORD });
  admin = (await loggedInClient(server, { role: "admin" })).client;
  await setConfig({
    smtp_host: "127.0.0.1",
    smtp_port: sink.port,
    smtp_secure: false,
    smtp_user: SMTP_USER,
    smtp_password: SMTP_PASSWORD,
    smtp_from: FROM,
  });
  // An admin saving the form again sends the mask back for the password; that must keep it, and
  // saving one field must not reset the SMTP fields saved before.
  const shown = await setConfig({ smtp_password: "********", notice_title: "维护通知" });
  expect(shown.smtp_password).toBe("********");
  expect(shown.smtp_host).toBe("127.0.0.1");
});

afterAll(async () => {
  await server?.close();
  await sink?.close();
});

describe("sign-up confirmation mail", () => {
  test("arrives at the new address with a link that confirms the e-mail exactly once", async () => {
    const email = uniqueEmail("confirm");
    await signup(email, "correct-horse-1");
    const mail = await sink.waitFor(email);
    expect(mail.to).toEqual([email]);
    expect(mail.from).toBe(FROM);
    // Delivered through the authenticated account: the masked save kept the real SMTP password.
    expect(mail.authUser).toBe(SMTP_USER);
    expect(mail.subject).toContain("注册");

    const link = confirmLinkOf(mail);
    expect(link.action).toBe("signup_confirm");
    expect(link.origin).toBe(server.url);
    expect(link.serialId).toMatch(/^[0-9a-f]{24}$/);
    expect(link.key).toMatch(/^[0-9a-f]{64}$/);
    // Only the key's hash is stored.
    const stored = await server.context.db.get<{ key_hash: string }>(
      "SELECT key_hash FROM email_tokens WHERE serial_id = ?",
      link.serialId,
    );
    expect(stored?.key_hash).toBeDefined();
    expect(stored?.key_hash).not.toBe(link.key);

    expect((await user(email)).email_verified).toBe(0);
    expect((await openLink(link.action, link.serialId, link.key)).Code).toBe(0);
    expect((await user(email)).email_verified).toBe(1);

    const again = await openLink(link.action, link.serialId, link.key);
    expect(again.Code).not.toBe(0);
    expect(again.msg.length).toBeGreaterThan(0);
  });

  test("a wrong key, the other action's endpoint and an expired link are refused", async () => {
    const email = uniqueEmail("wrongkey");
    await signup(email, "correct-horse-1");
    const link = confirmLinkOf(await sink.waitFor(email));
    const flipped = (link.key[0] === "0" ? "1" : "0") + link.key.slice(1);

    expect((await openLink("signup_confirm", link.serialId, flipped)).Code).not.toBe(0);
    expect((await openLink("change_password", link.serialId, link.key)).Code).not.toBe(0);
    expect((await user(email)).email_verified).toBe(0);
    // Failed attempts do not use the link up.
    expect((await openLink("signup_confirm", link.serialId, link.key)).Code).toBe(0);

    const late = uniqueEmail("expired");
    await signup(late, "correct-horse-1");
    const lateLink = confirmLinkOf(await sink.waitFor(late));
    await server.context.db.run(
      "UPDATE email_tokens SET expire_time = ? WHERE serial_id = ?",
      Date.now() - 1000,
      lateLink.serialId,
    );
    const expired = await openLink("signup_confirm", lateLink.serialId, lateLink.key);
    expect(expired.Code).not.toBe(0);
    expect((await user(late)).email_verified).toBe(0);
  });
});

describe("password reset by mail", () => {
  test("opening the link changes nothing; typing the new password again applies it, ends the old sessions, logs the page in", async () => {
    const { client, email, user: row } = await loggedInClient(server, { password: "old-password-1" });
    const link = `${server.url}/api/subscript/clash/${row.id}/${row.userkey}`;
    const answer = await new ApiClient(server.url).call("/api/user/reset_password", {
      email,
      password: transformPassword("new-password-2"),
      describUrl: link,
    });
    expect(answer.code).toBe(0);

    const mail = await sink.waitFor(email);
    expect(mail.subject).toContain("密码");
    expect(mail.body).toContain("再次输入新密码");
    const confirm = confirmLinkOf(mail);
    expect(confirm.action).toBe("change_password");
    expect(confirm.origin).toBe(server.url);

    // Pending: the old password still works, the new one does not yet.
    expect((await new ApiClient(server.url).login(email, "new-password-2")).code).toBe(1000);
    const stillOld = new ApiClient(server.url);
    expect((await stillOld.login(email, "old-password-1")).code).toBe(0);
    expect((await client.call("/api/user/userinfo")).code).toBe(0);

    // Opening the link (GET, as a mail scanner or the old page would) changes nothing.
    const opened = await openLink(confirm.action, confirm.serialId, confirm.key);
    expect(opened.Code).toBe(1000);
    expect(opened.msg).toBe("请在确认页面再次输入新密码完成修改");
    expect((await client.call("/api/user/userinfo")).code).toBe(0);

    const page = new ApiClient(server.url);
    expect(await typeAgain(confirm.serialId, confirm.key, "new-password-2", page)).toEqual({
      Code: 0,
      msg: "ok",
    });
    expect((await page.call<{ email: string }>("/api/user/userinfo")).data.email).toBe(email);

    expect((await client.call("/api/user/userinfo")).code).toBe(1002);
    expect((await stillOld.call("/api/user/userinfo")).code).toBe(1002);
    const oldLogin = await new ApiClient(server.url).login(email, "old-password-1");
    expect(oldLogin.code).toBe(1000);
    expect(oldLogin.msg).toBe("用户不存在或密码错误");
    expect((await new ApiClient(server.url).login(email, "new-password-2")).code).toBe(0);
    expect((await user(email)).email_verified).toBe(1);

    // The link is spent.
    const again = await typeAgain(confirm.serialId, confirm.key, "new-password-2");
    expect(again).toEqual({ Code: 1000, msg: "链接已使用" });
  });

  test("an expired password link changes nothing", async () => {
    const { client, email, user: row } = await loggedInClient(server, { password: "old-password-1" });
    const answer = await new ApiClient(server.url).call("/api/user/reset_password", {
      email,
      password: transformPassword("new-password-2"),
      describUrl: `https://any.example/api/subscript/ss/${row.id}/${row.userkey}`,
    });
    expect(answer.code).toBe(0);
    const confirm = confirmLinkOf(await sink.waitFor(email));
    await server.context.db.run(
      "UPDATE email_tokens SET expire_time = ? WHERE serial_id = ?",
      Date.now() - 1,
      confirm.serialId,
    );
    expect(await typeAgain(confirm.serialId, confirm.key, "new-password-2")).toEqual({
      Code: 1000,
      msg: "链接已过期",
    });
    expect((await client.call("/api/user/userinfo")).code).toBe(0);
    expect((await new ApiClient(server.url).login(email, "old-password-1")).code).toBe(0);
    expect((await new ApiClient(server.url).login(email, "new-password-2")).code).toBe(1000);
  });

  test("a malformed confirmation is refused with a message; a sign-up link cannot change a password", async () => {
    const email = uniqueEmail("wrongaction");
    await signup(email, "correct-horse-1");
    const link = confirmLinkOf(await sink.waitFor(email));
    expect((await typeAgain(link.serialId, link.key, "correct-horse-1")).Code).toBe(1004);
    const client = new ApiClient(server.url);
    const bodies: [string, string][] = [
      ["", "链接无效"],
      ["not json", "链接无效"],
      [
        JSON.stringify({ serial_id: "x", key: link.key, password: transformPassword("pw-12345678") }),
        "链接无效",
      ],
      [JSON.stringify({ serial_id: link.serialId, key: link.key, password: "plain" }), "密码格式错误"],
      [JSON.stringify({ serial_id: link.serialId, key: link.key }), "密码格式错误"],
    ];
    for (const [body, msg] of bodies) {
      const response = await client.raw("/api/account/change_password", body);
      expect(await response.json()).toEqual({ Code: 1000, msg });
    }
    expect((await openLink("signup_confirm", link.serialId, link.key)).Code).toBe(0);
  });

  test("without site_url, mailed links point at the preferred domain, never at the request's Host", async () => {
    await setConfig({ site_url: "", preferDomain: "ferry.example" });
    try {
      const { email, user: row } = await loggedInClient(server);
      const payload = {
        email,
        password: transformPassword("new-password-2"),
        describUrl: `${server.url}/api/subscript/clash/${row.id}/${row.userkey}`,
      };
      const response = await new ApiClient(server.url).raw(
        "/api/user/reset_password",
        JSON.stringify({ data: toBase64Json(payload) }),
        { host: "attacker.example" },
      );
      expect((await decodeAnswer(response)).code).toBe(0);
      expect(confirmLinkOf(await sink.waitFor(email)).origin).toBe("https://ferry.example");
    } finally {
      await setConfig({ site_url: server.url, preferDomain: "" });
    }
  });
});

test("when the mail server is down, sign-up still succeeds, the account works and the admin finds why in the error log", async () => {
  await setConfig({ smtp_port: await closedPort() });
  const stderr = spyOn(console, "error");
  try {
    const email = uniqueEmail("nomail");
    const client = await signup(email, "correct-horse-1");
    expect((await client.call("/api/user/userinfo")).code).toBe(0);
    expect((await new ApiClient(server.url).login(email, "correct-horse-1")).code).toBe(0);
    const logged = await server.context.db.get<{ msg: string }>(
      "SELECT msg FROM error_logs WHERE name = 'signup_confirm mail'",
    );
    expect(logged?.msg).toContain("ECONNREFUSED");
    expect(stderr).not.toHaveBeenCalled();
  } finally {
    stderr.mockRestore();
    await setConfig({ smtp_port: sink.port });
  }
});

test("when the mail server is down, a reset answers a clear failure, logs it and changes nothing", async () => {
  const { email, password, user: row } = await loggedInClient(server);
  const link = `${server.url}/api/subscript/clash/${row.id}/${row.userkey}`;
  await setConfig({ smtp_port: await closedPort() });
  try {
    const answer = await new ApiClient(server.url).call("/api/user/reset_password", {
      email,
      password: transformPassword("brand-new-pass-2"),
      describUrl: link,
    });
    expect(answer.code).toBe(999);
    expect(answer.msg).toBe("确认邮件发送失败，请稍后重试");
    const logged = await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM error_logs WHERE name = 'reset_password mail'",
    );
    expect(logged?.n).toBeGreaterThan(0);
    expect((await new ApiClient(server.url).login(email, password)).code).toBe(0);
  } finally {
    await setConfig({ smtp_port: sink.port });
  }
});
