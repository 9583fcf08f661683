/** The page entry: health check, SPA, `?token=` hand-over and the `?c=` channel cookie. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ApiClient,
  loggedInClient,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../tests/harness.ts";
import { transformPassword } from "./modules/user/password.ts";
import type { UserInfo } from "./modules/user/schema.ts";
import { mintLoginLink } from "./modules/user/session.ts";

let server: TestServer;
const DAY = 86_400;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

function cookie(response: Response, name: string): { value: string; attrs: string[] } | undefined {
  const line = response.headers.getSetCookie().find((l) => l.startsWith(`${name}=`));
  if (!line) return undefined;
  const [pair = "", ...attrs] = line.split(";");
  return {
    value: decodeURIComponent(pair.slice(name.length + 1)),
    attrs: attrs.map((a) => a.trim().toLowerCase()),
  };
}

async function storedChannel(email: string): Promise<string | undefined> {
  return (
    await server.context.db.get<{ channel_code: string }>(
      "SELECT channel_code FROM users WHERE email = ?",
      email,
    )
  )?.channel_code;
}

async function signup(client: ApiClient) {
  const email = uniqueEmail("channel");
  const answer = await client.call<UserInfo>("/api/user/signup", {
    email,
    password: transformPassword("correct-horse-1"),
  });
  expect(answer.code).toBe(0);
  return { email, info: answer.data };
}

test("GET /healthz answers 200 and GET / serves the SPA", async () => {
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  const page = await fetch(`${server.url}/`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  expect(await page.text()).toContain("<");
});

describe("?token=", () => {
  test("a minted login link: a fresh HttpOnly session cookie and a redirect to the same page without the token", async () => {
    const { user } = await loggedInClient(server);
    const token = await mintLoginLink(server.context, user.id);
    const browser = new ApiClient(server.url);
    const response = await browser.get(`/?token=${token}`);
    expect(response.status).toBe(302);
    const location = response.headers.get("location") ?? "";
    expect(location).toBe("/");
    expect(location).not.toContain(token);
    expect(response.headers.get("cache-control")).toContain("no-store");

    const set = cookie(response, "token");
    expect(set?.value).toMatch(/^[0-9a-f]{64}$/);
    expect(set?.value).not.toBe(token);
    expect(set?.attrs).toContain("httponly");
    expect(set?.attrs).toContain("path=/");
    expect(set?.attrs).toContain("samesite=lax");
    expect(set?.attrs).toContain(`max-age=${99_999 * DAY}`);

    const info = await browser.call<UserInfo>("/api/user/userinfo");
    expect(info.code).toBe(0);
    expect(info.data._id).toBe(user.id);
  });

  test("other query parameters survive the redirect; a trailing slash is stripped from the token", async () => {
    const { user } = await loggedInClient(server);
    const token = await mintLoginLink(server.context, user.id);
    const response = await new ApiClient(server.url).get(`/?c=promo7&token=${token}/`);
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/?c=promo7");
    expect(cookie(response, "token")?.value).toMatch(/^[0-9a-f]{64}$/);
    expect(cookie(response, "channel_code")?.value).toBe("promo7");
  });

  test("a login link replaces an existing session cookie; a session token in the link is ignored", async () => {
    const first = await loggedInClient(server);
    const second = await loggedInClient(server);
    const browser = first.client;
    const ignored = await browser.get(`/?token=${second.client.cookies.get("token")}`);
    expect(ignored.status).toBe(302);
    expect(cookie(ignored, "token")).toBeUndefined();
    expect((await browser.call<UserInfo>("/api/user/userinfo")).data._id).toBe(first.user.id);

    const response = await browser.get(`/?token=${await mintLoginLink(server.context, second.user.id)}`);
    expect(response.status).toBe(302);
    expect((await browser.call<UserInfo>("/api/user/userinfo")).data._id).toBe(second.user.id);
  });
});

describe("?c= channel code", () => {
  test("sets channel_code for 30 days and a sign-up then stores it on the user", async () => {
    const browser = new ApiClient(server.url);
    const page = await browser.get("/?c=partner42");
    expect(page.status).toBe(200);
    const set = cookie(page, "channel_code");
    expect(set?.value).toBe("partner42");
    expect(set?.attrs).toContain(`max-age=${30 * DAY}`);

    const { email, info } = await signup(browser);
    expect(info.channel_code).toBe("partner42");
    expect(await storedChannel(email)).toBe("partner42");
  });

  test("a trailing slash is stripped and a second visit with another code keeps the first", async () => {
    const browser = new ApiClient(server.url);
    expect(cookie(await browser.get("/?c=first/"), "channel_code")?.value).toBe("first");
    const again = await browser.get("/?c=second");
    expect(cookie(again, "channel_code")).toBeUndefined();
    const { email } = await signup(browser);
    expect(await storedChannel(email)).toBe("first");
  });

  test("without c the cookie gets the default no-code value for 99999 days and sign-up stores an empty code", async () => {
    const browser = new ApiClient(server.url);
    const page = await browser.get("/");
    const set = cookie(page, "channel_code");
    expect(set).toBeDefined();
    expect(set?.value).not.toBe("");
    expect(set?.attrs).toContain(`max-age=${99_999 * DAY}`);

    const { email, info } = await signup(browser);
    expect(await storedChannel(email)).toBe("");
    expect(info.channel_code).toBe("");
    // Once set, the cookie is not re-sent on later visits.
    expect(cookie(await browser.get("/"), "channel_code")).toBeUndefined();
  });

  test("a sign-up without any channel cookie stores an empty code", async () => {
    const { email } = await signup(new ApiClient(server.url));
    expect(await storedChannel(email)).toBe("");
  });
});

describe("SPA files", () => {
  test("app.js is served gzipped to browsers that accept it, plain otherwise, with the same bytes", async () => {
    const plain = await fetch(`${server.url}/app.js`, { headers: { "accept-encoding": "identity" } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toContain("text/javascript");
    expect(plain.headers.get("content-encoding")).toBeNull();
    const plainText = await plain.text();
    expect(plainText.length).toBeGreaterThan(1000);

    const zipped = await fetch(`${server.url}/app.js`, {
      headers: { "accept-encoding": "gzip" },
      decompress: false,
    });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    const raw = new Uint8Array(await zipped.arrayBuffer());
    expect(raw.length).toBeLessThan(plainText.length);
    expect(new TextDecoder().decode(Bun.gunzipSync(raw))).toBe(plainText);
  });

  test("a revalidation with the current ETag answers 304 without a body", async () => {
    const first = await fetch(`${server.url}/app.js`);
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    const again = await fetch(`${server.url}/app.js`, { headers: { "if-none-match": etag ?? "" } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const stale = await fetch(`${server.url}/app.js`, { headers: { "if-none-match": '"old"' } });
    expect(stale.status).toBe(200);
  });

  test("unknown files are 404 and the SPA entry is only served at /", async () => {
    expect((await fetch(`${server.url}/nope.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/index.html`)).status).toBe(404);
    const root = await fetch(`${server.url}/`);
    expect(root.status).toBe(200);
    expect(await root.text()).toContain('<div id="root">');
  });
});
