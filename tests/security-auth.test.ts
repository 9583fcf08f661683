/**
 * Issue 11, the account findings, replayed over real HTTP against a server with its real rate
 * limits (scale 1) and a real SMTP sink:
 *   1  login limits lock the owner out          2  `?token=` session fixation
 *   10 account takeover through the reset flow  11 admin by e-mail before sign-up
 * Each browser below connects from its own loopback address (127.x.y.z), so the server sees many
 * client addresses on the socket itself, with no forwarded headers involved.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { request as httpRequest } from "node:http";
import { confirmationMail, NO_ORIGIN_LOG } from "../src/modules/user/confirm.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import type { UserRow } from "../src/modules/user/row.ts";
import type { UserInfo } from "../src/modules/user/schema.ts";
import { createUser } from "../src/modules/user/service.ts";
import { LOGIN_LINK_MS, mintLoginLink } from "../src/modules/user/session.ts";
import { toBase64Json } from "../src/rpc/envelope.ts";
import { sha256Hex } from "../src/rpc/ids.ts";
import { ApiClient, decodeAnswer, startTestServer, type TestServer, uniqueEmail } from "./harness.ts";
import { confirmLinkOf, type MailSink, sinkSettings, startMailSink } from "./mail-sink.ts";

/** A browser with a cookie jar whose requests leave from `address` (any 127.x.y.z is loopback). */
class Browser extends ApiClient {
  constructor(
    baseUrl: string,
    public address = "127.0.0.1",
  ) {
    super(baseUrl);
  }

  override raw(path: string, body: string | undefined, headers: Record<string, string> = {}) {
    return this.send("POST", path, body, { "content-type": "application/json", ...headers });
  }

  override get(path: string, headers: Record<string, string> = {}) {
    return this.send("GET", path, undefined, headers);
  }

  private send(method: string, path: string, body: string | undefined, headers: Record<string, string>) {
    const url = new URL(this.baseUrl + path);
    return new Promise<Response>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method,
          localAddress: this.address,
          headers: { cookie: this.cookieHeader(), ...headers },
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
          incoming.on("end", () => {
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(incoming.headers)) {
              for (const one of [value ?? []].flat()) responseHeaders.append(name, one);
            }
            const status = incoming.statusCode ?? 0;
            const response = new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), {
              status,
              headers: responseHeaders,
            });
            this.absorb(response);
            resolve(response);
          });
        },
      );
      outgoing.on("error", reject);
      outgoing.end(body);
    });
  }
}

let server: TestServer;
let sink: MailSink;

beforeAll(async () => {
  server = await startTestServer({ rateLimitScale: 1 });
  sink = await startMailSink();
  await server.context.settings.update(sinkSettings(sink));
});

afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const browser = (address?: string) => new Browser(server.url, address);

async function account(password: string): Promise<UserRow> {
  return createUser(server.context, {
    email: uniqueEmail("owner"),
    passwordDigest: transformPassword(password),
  });
}

function tally(codes: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const code of codes) counts[code] = (counts[code] ?? 0) + 1;
  return counts;
}

function setCookieNames(response: Response): string[] {
  return response.headers.getSetCookie().map((line) => line.slice(0, line.indexOf("=")));
}

describe("finding 1: login limits count failures and never lock the owner's own browser out", () => {
  test("1 000 failed logins for one account from 50 addresses; the owner's browser then logs in at once", async () => {
    const password = "owner-password-1";
    const owner = await account(password);
    const ownBrowser = browser("127.0.0.2");
    expect((await ownBrowser.login(owner.email, password)).code).toBe(0);
    expect((await ownBrowser.call("/api/user/logout")).code).toBe(0);

    const codes = (
      await Promise.all(
        Array.from({ length: 50 }, async (_, a) => {
          const attacker = browser(`127.0.1.${a + 1}`);
          const answers: number[] = [];
          for (let i = 0; i < 20; i++)
            answers.push((await attacker.login(owner.email, `guess-${a}-${i}`)).code);
          return answers;
        }),
      )
    ).flat();
    // Ten wrong passwords reach the check; every other try is refused before the password is looked at.
    expect(tally(codes)).toEqual({ 1000: 10, 1005: 990 });

    const back = await ownBrowser.login(owner.email, password);
    expect(back.code).toBe(0);
    expect((await ownBrowser.call<UserInfo>("/api/user/userinfo")).data._id).toBe(owner.id);

    // Any other client is still refused, even with the right password.
    const stranger = browser("127.0.0.3");
    const refused = await stranger.login(owner.email, password);
    expect(refused.code).toBe(1005);
    expect(refused.msg.length).toBeGreaterThan(0);
    expect(stranger.cookies.has("token")).toBe(false);
  }, 60_000);

  test("a brute force from one address is stopped after 30 failures on any accounts; a trusted browser there still logs in", async () => {
    const password = "victim-password-1";
    const victim = await account(password);
    const trusted = browser("127.0.2.2");
    expect((await trusted.login(victim.email, password)).code).toBe(0);

    const attacker = browser("127.0.2.1");
    for (let i = 0; i < 30; i++) {
      expect((await attacker.login(uniqueEmail("sprayed"), `guess-${i}`)).code).toBe(1000);
    }
    const other = await account(password);
    const blocked = browser("127.0.2.1");
    expect((await blocked.login(other.email, password)).code).toBe(1005);
    expect(blocked.cookies.has("token")).toBe(false);

    // The owner sits behind the same address (a shared NAT): their browser is trusted for the account.
    trusted.address = "127.0.2.1";
    expect((await trusted.login(victim.email, password)).code).toBe(0);
  }, 60_000);

  test("right passwords use up no budget: 40 logins from one address all succeed, and 10 failures still remain", async () => {
    const password = "often-logs-in-1";
    const user = await account(password);
    for (let i = 0; i < 40; i++)
      expect((await browser("127.0.3.1").login(user.email, password)).code).toBe(0);
    for (let i = 0; i < 10; i++)
      expect((await browser("127.0.3.1").login(user.email, `typo-${i}`)).code).toBe(1000);
    expect((await browser("127.0.3.1").login(user.email, password)).code).toBe(1005);
  }, 60_000);

  test("a trusted browser spends its own 5 failures; a trusted token planted under another account's name is not trusted", async () => {
    const password = "two-laptops-1";
    const user = await account(password);
    const laptop = browser("127.0.4.1");
    const phone = browser("127.0.4.2");
    expect((await laptop.login(user.email, password)).code).toBe(0);
    expect((await phone.login(user.email, password)).code).toBe(0);
    for (let i = 0; i < 10; i++)
      expect((await browser("127.0.4.3").login(user.email, `guess-${i}`)).code).toBe(1000);

    for (let i = 0; i < 5; i++) expect((await laptop.login(user.email, `typo-${i}`)).code).toBe(1000);
    // Its budget spent, the laptop is a stranger to the locked account.
    expect((await laptop.login(user.email, password)).code).toBe(1005);
    expect((await phone.login(user.email, password)).code).toBe(0);

    // The phone's trusted token, copied under a locked account's cookie name, opens nothing.
    const target = await account(password);
    for (let i = 0; i < 10; i++)
      expect((await browser("127.0.4.4").login(target.email, `guess-${i}`)).code).toBe(1000);
    const planted = browser("127.0.4.5");
    const phoneToken = phone.cookies.get(`device_${user.id}`) ?? "";
    expect(phoneToken).toMatch(/^[0-9a-f]{64}$/);
    planted.cookies.set(`device_${target.id}`, phoneToken);
    expect((await planted.login(target.email, password)).code).toBe(1005);
  }, 60_000);

  test("the trusted-browser cookie is HttpOnly, long-lived and stored hashed", async () => {
    const user = await account("cookie-check-1");
    const client = browser("127.0.4.9");
    const response = await client.raw(
      "/api/user/login",
      JSON.stringify({
        data: Buffer.from(
          JSON.stringify({ email: user.email, password: transformPassword("cookie-check-1") }),
        ).toString("base64"),
      }),
    );
    const line = response.headers.getSetCookie().find((l) => l.startsWith(`device_${user.id}=`)) ?? "";
    const attrs = line
      .toLowerCase()
      .split(";")
      .map((a) => a.trim());
    expect(attrs).toContain("httponly");
    expect(attrs).toContain(`max-age=${365 * 86_400}`);
    const token = client.cookies.get(`device_${user.id}`) ?? "";
    const stored = await server.context.db.all<{ token_hash: string }>(
      "SELECT token_hash FROM trusted_devices WHERE user_id = ?",
      user.id,
    );
    expect(stored.map((row) => row.token_hash)).toEqual([sha256Hex(token)]);
  });
});

describe("finding 2: ?token= takes only a one-time login link the server minted", () => {
  test("an attacker's session token in a link sets no cookie; a logged-in victim stays in their own account", async () => {
    const attackerPassword = "attacker-pass-1";
    const attackerAccount = await account(attackerPassword);
    const attacker = browser("127.0.6.1");
    expect((await attacker.login(attackerAccount.email, attackerPassword)).code).toBe(0);
    const planted = attacker.cookies.get("token") ?? "";
    expect(planted).toMatch(/^[0-9a-f]{64}$/);

    const visitor = browser("127.0.6.2");
    const response = await visitor.get(`/?token=${planted}`);
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/");
    expect(setCookieNames(response)).not.toContain("token");
    expect((await visitor.call("/api/user/userinfo")).code).toBe(1002);

    const victimAccount = await account("victim-pass-1");
    const victim = browser("127.0.6.3");
    expect((await victim.login(victimAccount.email, "victim-pass-1")).code).toBe(0);
    const hashForm = await victim.get(`/?token=${planted}/#/shop`);
    expect(setCookieNames(hashForm)).not.toContain("token");
    expect((await victim.call<UserInfo>("/api/user/userinfo")).data._id).toBe(victimAccount.id);
  });

  test("a minted login token logs in once with a fresh session; used, expired or other values do not", async () => {
    const user = await account("link-login-1");
    const token = await mintLoginLink(server.context, user.id);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const stored = await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM login_tokens WHERE token_hash = ?",
      sha256Hex(token),
    );
    expect(stored?.n).toBe(1);

    const first = browser("127.0.6.4");
    const response = await first.get(`/?c=promo&token=${token}/`);
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/?c=promo");
    const session = first.cookies.get("token") ?? "";
    expect(session).toMatch(/^[0-9a-f]{64}$/);
    expect(session).not.toBe(token);
    expect((await first.call<UserInfo>("/api/user/userinfo")).data._id).toBe(user.id);

    const second = browser("127.0.6.5");
    expect(setCookieNames(await second.get(`/?token=${token}`))).not.toContain("token");
    expect((await second.call("/api/user/userinfo")).code).toBe(1002);

    const stale = await mintLoginLink(server.context, user.id, Date.now() - LOGIN_LINK_MS - 1);
    const late = browser("127.0.6.6");
    expect(setCookieNames(await late.get(`/?token=${stale}`))).not.toContain("token");
  });
});

describe("finding 10: a reset takes effect only when the mailbox owner types the new password", () => {
  const subscriptionLink = (user: UserRow) => `${server.url}/api/subscript/clash/${user.id}/${user.userkey}`;

  async function requestReset(
    from: Browser,
    user: UserRow,
    newPassword: string,
    headers: Record<string, string> = {},
  ) {
    const payload = {
      email: user.email,
      password: transformPassword(newPassword),
      describUrl: subscriptionLink(user),
    };
    return decodeAnswer(
      await from.raw("/api/user/reset_password", JSON.stringify({ data: toBase64Json(payload) }), headers),
    );
  }

  async function typeAgain(on: Browser, link: { serialId: string; key: string }, password: string) {
    const response = await on.raw(
      "/api/account/change_password",
      JSON.stringify({ serial_id: link.serialId, key: link.key, password: transformPassword(password) }),
    );
    expect(response.status).toBe(200);
    return (await response.json()) as { Code: number; msg: string };
  }

  test("the finding-10 chain: the attacker's reset with his password, opened by the owner, changes nothing", async () => {
    const ownerPassword = "owner-secret-1";
    const owner = await account(ownerPassword);
    const ownerBrowser = browser("127.0.5.2");
    expect((await ownerBrowser.login(owner.email, ownerPassword)).code).toBe(0);

    // The attacker holds the subscription link; get_email fills the address for him.
    const attacker = browser("127.0.5.1");
    const found = await attacker.call("/api/user/get_email", { describUrl: subscriptionLink(owner) });
    expect(found.data).toBe(owner.email);
    const asked = await requestReset(attacker, owner, "attacker-pass-9", { host: "evil.example" });
    expect(asked.code).toBe(0);

    // The mail goes to the owner and points at the panel's own origin, not the Host the attacker sent.
    const mail = await sink.waitFor(owner.email);
    expect(mail.body).not.toContain("evil.example");
    const link = confirmLinkOf(mail);
    expect(link.origin).toBe(server.url);
    expect(link.action).toBe("change_password");

    // The owner opens the link: the page loads, and the old page's call changes nothing.
    expect((await ownerBrowser.get(`/#/confirm?serial_id=${link.serialId}&key=${link.key}`)).status).toBe(
      200,
    );
    const opened = (await (
      await ownerBrowser.get(`/api/account/change_password?serial_id=${link.serialId}&key=${link.key}`)
    ).json()) as { Code: number; msg: string };
    expect(opened.Code).not.toBe(0);
    // Not having asked, the owner types a password of their own: refused.
    const mismatch = await typeAgain(ownerBrowser, link, ownerPassword);
    expect(mismatch.Code).toBe(1000);
    expect(mismatch.msg).toContain("不一致");

    expect((await browser("127.0.5.3").login(owner.email, "attacker-pass-9")).code).toBe(1000);
    expect((await browser("127.0.5.4").login(owner.email, ownerPassword)).code).toBe(0);
    expect((await ownerBrowser.call<UserInfo>("/api/user/userinfo")).data._id).toBe(owner.id);
  });

  test("the person who asked types it again: applied once, every other session ends, the confirming browser is in", async () => {
    const owner = await account("forgotten-pass-1");
    const laptop = browser("127.0.5.5");
    expect((await laptop.login(owner.email, "forgotten-pass-1")).code).toBe(0);
    const phone = browser("127.0.5.6");
    expect((await requestReset(phone, owner, "remembered-pass-2")).code).toBe(0);
    const link = confirmLinkOf(await sink.waitFor(owner.email));

    const typo = await typeAgain(phone, link, "remembered-pass-3");
    expect(typo).toEqual({ Code: 1000, msg: "与申请时填写的新密码不一致，还可以再试 4 次" });
    expect(await typeAgain(phone, link, "remembered-pass-2")).toEqual({ Code: 0, msg: "ok" });

    expect((await phone.call<UserInfo>("/api/user/userinfo")).data._id).toBe(owner.id);
    expect((await laptop.call("/api/user/userinfo")).code).toBe(1002);
    const trustedLeft = await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM trusted_devices WHERE user_id = ?",
      owner.id,
    );
    expect(trustedLeft?.n).toBe(0);
    expect((await browser("127.0.5.7").login(owner.email, "forgotten-pass-1")).code).toBe(1000);
    expect((await browser("127.0.5.7").login(owner.email, "remembered-pass-2")).code).toBe(0);
    expect((await typeAgain(browser("127.0.5.8"), link, "remembered-pass-2")).Code).not.toBe(0);
  });

  test("five wrong passwords spend the link; the password stays as it was", async () => {
    const owner = await account("stays-the-same-1");
    expect((await requestReset(browser("127.0.5.9"), owner, "someone-elses-2")).code).toBe(0);
    const link = confirmLinkOf(await sink.waitFor(owner.email));
    const guesser = browser("127.0.5.10");
    for (let i = 0; i < 5; i++) expect((await typeAgain(guesser, link, `guess-${i}-pass`)).Code).toBe(1000);
    const spent = await typeAgain(guesser, link, "someone-elses-2");
    expect(spent.Code).toBe(1000);
    expect(spent.msg).toContain("已失效");
    expect((await browser("127.0.5.11").login(owner.email, "stays-the-same-1")).code).toBe(0);
  });

  test("without a site origin a reset is refused with advice to contact the admin, who sees why; sign-up sends no mail", async () => {
    const owner = await account("no-origin-pass-1");
    await server.context.settings.update({ site_url: "", preferDomain: "" });
    try {
      const answer = await requestReset(browser("127.0.5.12"), owner, "no-origin-pass-2", {
        host: "evil.example",
      });
      expect(answer.code).toBe(1000);
      expect(answer.msg).toContain("联系管理员");
      const logged = await server.context.db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM error_logs WHERE name = ?",
        NO_ORIGIN_LOG,
      );
      expect(logged?.n).toBeGreaterThan(0);
      const links = await server.context.db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM email_tokens WHERE user_id = ?",
        owner.id,
      );
      expect(links?.n).toBe(0);

      const email = uniqueEmail("origin-less");
      const signup = await browser("127.0.5.13").call("/api/user/signup", {
        email,
        password: transformPassword("no-origin-pass-3"),
      });
      expect(signup.code).toBe(0);
      expect(sink.mails.some((mail) => mail.to.includes(email))).toBe(false);
    } finally {
      await server.context.settings.update({ site_url: server.url });
    }
  });

  test("everything put into the mail's HTML is escaped", () => {
    const mail = confirmationMail(
      "change_password",
      `https://x.example/#/confirm?a=1&b="><img src=x onerror=alert(1)>`,
    );
    expect(mail.html).not.toContain("<img");
    expect(mail.html).not.toContain('"><');
    expect(mail.html).toContain("&#38;b=&#34;&#62;&#60;img");
  });
});

describe("finding 11: admin_id / yunying_list name an e-mail only once it is confirmed", () => {
  test("an unregistered address listed in admin_id gives nothing to whoever signs up with it, until the mailbox confirms", async () => {
    const email = uniqueEmail("future-admin");
    await server.context.settings.update({ admin_id: [email.toUpperCase()], yunying_list: [email] });
    try {
      const squatter = browser("127.0.7.1");
      const signup = await squatter.call<UserInfo>("/api/user/signup", {
        email,
        password: transformPassword("squatter-pass-1"),
      });
      expect(signup.code).toBe(0);
      expect(signup.data.type).toBe("normal");
      const refused = await squatter.call("/api/admin/config/get");
      expect(refused.code).toBe(1003);
      expect((await squatter.call("/api/yunying/anything")).code).toBe(1003);

      // Whoever really reads that mailbox confirms it; then the list applies.
      const link = confirmLinkOf(await sink.waitFor(email));
      const confirmed = (await (
        await squatter.get(`/api/account/signup_confirm?serial_id=${link.serialId}&key=${link.key}`)
      ).json()) as { Code: number };
      expect(confirmed.Code).toBe(0);
      expect((await squatter.call<UserInfo>("/api/user/userinfo")).data.type).toBe("admin");
      expect((await squatter.call("/api/admin/config/get")).code).toBe(0);
    } finally {
      await server.context.settings.update({ admin_id: [], yunying_list: [] });
    }
  });
});
