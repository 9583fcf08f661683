/**
 * The e-mail flows end to end: a real SMTP sink on 127.0.0.1, the SMTP settings made through the
 * admin API, the mail read and its link opened through GET /api/account/{action}.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import {
  ApiClient,
  loggedInClient,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { confirmLinkOf, type MailSink, startMailSink } from "../../../tests/mail-sink.ts";
import type { Settings } from "../settings/schema.ts";
import { transformPassword } from "./password.ts";
import type { UserRow } from "./service.ts";

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

function user(email: string): UserRow {
  const row = server.context.db.query<UserRow, [string]>("SELECT * FROM users WHERE email = ?").get(email);
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
    const stored = server.context.db
      .query<{ key_hash: string }, [string]>("SELECT key_hash FROM email_tokens WHERE serial_id = ?")
      .get(link.serialId);
    expect(stored?.key_hash).toBeDefined();
    expect(stored?.key_hash).not.toBe(link.key);

    expect(user(email).email_verified).toBe(0);
    expect((await openLink(link.action, link.serialId, link.key)).Code).toBe(0);
    expect(user(email).email_verified).toBe(1);

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
    expect(user(email).email_verified).toBe(0);
    // Failed attempts do not use the link up.
    expect((await openLink("signup_confirm", link.serialId, link.key)).Code).toBe(0);

    const late = uniqueEmail("expired");
    await signup(late, "correct-horse-1");
    const lateLink = confirmLinkOf(await sink.waitFor(late));
    server.context.db
      .query("UPDATE email_tokens SET expire_time = ? WHERE serial_id = ?")
      .run(Date.now() - 1000, lateLink.serialId);
    const expired = await openLink("signup_confirm", lateLink.serialId, lateLink.key);
    expect(expired.Code).not.toBe(0);
    expect(user(late).email_verified).toBe(0);
  });
});

describe("password reset by mail", () => {
  test("nothing changes until the link is opened; then the old password fails, the new works, old sessions end", async () => {
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
    const confirm = confirmLinkOf(mail);
    expect(confirm.action).toBe("change_password");
    expect(confirm.origin).toBe(server.url);

    // Pending: the old password still works, the new one does not yet.
    expect((await new ApiClient(server.url).login(email, "new-password-2")).code).toBe(1000);
    const stillOld = new ApiClient(server.url);
    expect((await stillOld.login(email, "old-password-1")).code).toBe(0);
    expect((await client.call("/api/user/userinfo")).code).toBe(0);

    expect((await openLink(confirm.action, confirm.serialId, confirm.key)).Code).toBe(0);

    expect((await client.call("/api/user/userinfo")).code).toBe(1002);
    expect((await stillOld.call("/api/user/userinfo")).code).toBe(1002);
    const oldLogin = await new ApiClient(server.url).login(email, "old-password-1");
    expect(oldLogin.code).toBe(1000);
    expect(oldLogin.msg).toBe("用户不存在或密码错误");
    expect((await new ApiClient(server.url).login(email, "new-password-2")).code).toBe(0);

    // The link is spent.
    expect((await openLink(confirm.action, confirm.serialId, confirm.key)).Code).not.toBe(0);
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
    server.context.db
      .query("UPDATE email_tokens SET expire_time = ? WHERE serial_id = ?")
      .run(Date.now() - 1, confirm.serialId);
    expect((await openLink(confirm.action, confirm.serialId, confirm.key)).Code).not.toBe(0);
    expect((await client.call("/api/user/userinfo")).code).toBe(0);
    expect((await new ApiClient(server.url).login(email, "old-password-1")).code).toBe(0);
    expect((await new ApiClient(server.url).login(email, "new-password-2")).code).toBe(1000);
  });

  test("with a preferred domain set, mailed links point at it", async () => {
    await setConfig({ preferDomain: "ferry.example" });
    try {
      const { email, user: row } = await loggedInClient(server);
      const answer = await new ApiClient(server.url).call("/api/user/reset_password", {
        email,
        password: transformPassword("new-password-2"),
        describUrl: `${server.url}/api/subscript/clash/${row.id}/${row.userkey}`,
      });
      expect(answer.code).toBe(0);
      expect(confirmLinkOf(await sink.waitFor(email)).origin).toBe("https://ferry.example");
    } finally {
      await setConfig({ preferDomain: "" });
    }
  });
});

test("when the mail server is down, sign-up still succeeds and the account works", async () => {
  await setConfig({ smtp_port: await closedPort() });
  try {
    const email = uniqueEmail("nomail");
    const client = await signup(email, "correct-horse-1");
    expect((await client.call("/api/user/userinfo")).code).toBe(0);
    expect((await new ApiClient(server.url).login(email, "correct-horse-1")).code).toBe(0);
  } finally {
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
    const logged = server.context.db
      .query<{ n: number }, []>("SELECT COUNT(*) AS n FROM error_logs WHERE name = 'reset_password mail'")
      .get();
    expect(logged?.n).toBeGreaterThan(0);
    expect((await new ApiClient(server.url).login(email, password)).code).toBe(0);
  } finally {
    await setConfig({ smtp_port: sink.port });
  }
});
