/**
 * `/api/user/change_use_info` over real HTTP (issue 13 §4, seed 000 §2 Profile, §7, §8): the
 * avatar and the three toggles are saved on the caller's own row only, and the customer's
 * subscription link serves the new file at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "yaml";
import {
  type ApiClient,
  loggedInClient,
  setUserColumns,
  startTestServer,
  type TestServer,
} from "../../../tests/harness.ts";
import { saveNode } from "../../../tests/nodes.ts";
import { GB } from "../../lib/traffic.ts";
import { Code } from "../../rpc/codes.ts";
import { DOWNLOAD_PREFIX, FileMsg } from "../file/schema.ts";
import { png } from "../file/test-images.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import type { UserRow } from "./row.ts";
import { DEFAULT_ICON, ProfileMsg, type UserInfo } from "./schema.ts";
import { findUserById } from "./service.ts";

const PATH = "/api/user/change_use_info";
let server: TestServer;

beforeAll(async () => {
  // Real limits (scale 1): the per-account limit of this call is part of what is tested.
  server = await startTestServer({ rateLimitScale: 1 });
});
afterAll(() => server.close());

const row = async (id: string) => (await findUserById(server.context, id)) as UserRow;
/** The row without last_active_time, which every logged-in call may move. */
async function stored(id: string) {
  const { last_active_time: _, ...rest } = await row(id);
  return rest;
}

async function customer(fields: Partial<Record<keyof UserRow, number>> = {}) {
  const made = await loggedInClient(server);
  await setUserColumns(server.context.db, made.user.id, fields);
  return made;
}

/** Uploads a PNG as the client's account; answers its download path. */
async function uploadImage(client: ApiClient): Promise<string> {
  const form = new FormData();
  form.append("file", new File([new Uint8Array(png())], "avatar.png", { type: "image/png" }));
  const response = await fetch(`${server.url}/api/file/upload`, {
    method: "POST",
    body: form,
    headers: { cookie: client.cookieHeader() },
  });
  const body = (await response.json()) as { file: { filename: string } };
  return `${DOWNLOAD_PREFIX}${body.file.filename}`;
}

const TOGGLES_ON = { inXinjiang: true, in_foreign: true, use_english_node: true };

describe("saving the profile", () => {
  test("success: the answer and /api/user/userinfo show the new avatar and every toggle", async () => {
    const { client, email } = await customer();
    const icon = await uploadImage(client);
    const saved = await client.call<UserInfo>(PATH, { email, icon, ...TOGGLES_ON });
    expect(saved).toMatchObject({ code: Code.ok, data: { icon, ...TOGGLES_ON } });

    const info = await client.call<UserInfo>("/api/user/userinfo");
    expect(info.data).toMatchObject({ email, icon, ...TOGGLES_ON });
  });

  test.each([
    ["inXinjiang", "in_xinjiang"],
    ["in_foreign", "in_foreign"],
    ["use_english_node", "use_english_node"],
  ] as const)("%s alone is saved, on and off again; the others keep their values", async (field, column) => {
    const { client, user, email } = await customer();
    const others = (["in_xinjiang", "in_foreign", "use_english_node"] as const).filter((c) => c !== column);
    expect(await client.call(PATH, { email, [field]: true })).toMatchObject({ code: Code.ok });
    expect((await client.call<UserInfo>("/api/user/userinfo")).data?.[field]).toBe(true);
    expect((await row(user.id))[column]).toBe(1);
    for (const other of others) expect((await row(user.id))[other]).toBe(0);

    expect(await client.call(PATH, { [field]: false })).toMatchObject({ code: Code.ok });
    expect((await client.call<UserInfo>("/api/user/userinfo")).data?.[field]).toBe(false);
  });

  test("the default logo, or an empty icon, stores the default logo", async () => {
    const { client } = await customer();
    await client.call(PATH, { icon: await uploadImage(client) });
    expect(await client.call(PATH, { icon: DEFAULT_ICON })).toMatchObject({ data: { icon: DEFAULT_ICON } });
    await client.call(PATH, { icon: await uploadImage(client) });
    expect(await client.call(PATH, { icon: "" })).toMatchObject({ data: { icon: DEFAULT_ICON } });
  });

  test("an agency user may save the toggles (only the bind section is hidden for them)", async () => {
    const { client } = await customer({ is_agency: 1 });
    expect(await client.call(PATH, TOGGLES_ON)).toMatchObject({ code: Code.ok, data: TOGGLES_ON });
  });

  test("the same e-mail in another case is accepted; a different one is refused and nothing is saved", async () => {
    const { client, user, email } = await customer();
    expect(await client.call(PATH, { email: email.toUpperCase(), inXinjiang: true })).toMatchObject({
      code: Code.ok,
    });
    const refused = await client.call(PATH, { email: "someone-else@example.com", in_foreign: true });
    expect(refused).toMatchObject({ code: Code.badInput, msg: ProfileMsg.emailLocked });
    expect(await row(user.id)).toMatchObject({ email, in_xinjiang: 1, in_foreign: 0 });
  });
});

describe("what a caller cannot do", () => {
  test("a visitor gets 1002", async () => {
    const { client } = await customer();
    await client.call("/api/user/logout");
    expect(await client.call(PATH, TOGGLES_ON)).toMatchObject({ code: Code.notLoggedIn });
  });

  test("another user's upload as the avatar is refused, and the toggles sent with it are not saved", async () => {
    const owner = await customer();
    const theirs = await uploadImage(owner.client);
    const { client, user } = await customer();
    const before = await stored(user.id);
    const answer = await client.call(PATH, { icon: theirs, ...TOGGLES_ON });
    expect(answer).toMatchObject({ code: Code.badInput, msg: FileMsg.notYours });
    expect(await stored(user.id)).toEqual(before);
  });

  test.each([
    "/etc/passwd",
    "https://evil.example/track.png",
    `${DOWNLOAD_PREFIX}../ferry.db`,
    `${DOWNLOAD_PREFIX}${"0".repeat(32)}.svg`,
    "javascript:alert(1)",
  ])("icon %s is refused with a clear message", async (icon) => {
    const { client, user } = await customer();
    const before = await stored(user.id);
    const answer = await client.call(PATH, { icon });
    expect(answer.code).toBe(Code.badInput);
    expect(answer.msg).toContain(FileMsg.notYours);
    expect(await stored(user.id)).toEqual(before);
  });

  test("an upload name that matches the pattern but was never uploaded is refused", async () => {
    const { client } = await customer();
    const answer = await client.call(PATH, { icon: `${DOWNLOAD_PREFIX}${"a".repeat(32)}.png` });
    expect(answer).toMatchObject({ code: Code.badInput, msg: FileMsg.notYours });
  });

  test("other fields in the payload (_id, type, traffic, money) are ignored: only the caller's toggles change", async () => {
    const other = await customer({ traffic: 5 * GB });
    const { client, user, email } = await customer({ traffic: GB, wallet_fen: 1234 });
    const otherBefore = await stored(other.user.id);
    const before = await stored(user.id);
    const answer = await client.call<UserInfo>(PATH, {
      _id: other.user.id,
      id: other.user.id,
      email,
      type: "admin",
      traffic: 1e15,
      wallet_fen: 99_999_999,
      money: 99_999,
      vipExpireTime: Date.now() + 365 * 86_400_000,
      userkey: "0".repeat(32),
      permissions: [{ id: "x", desc: "x", expireTime: Date.now() + 1 }],
      inXinjiang: true,
    });
    expect(answer).toMatchObject({ code: Code.ok, data: { _id: user.id, type: "normal", traffic: GB } });
    expect(await stored(other.user.id)).toEqual(otherBefore);
    expect(await stored(user.id)).toEqual({ ...before, in_xinjiang: 1 });
  });

  test("saving is limited per account: the 31st save in 10 minutes gets 1005 and changes nothing", async () => {
    const { client, user } = await customer();
    for (let i = 0; i < 30; i++)
      expect((await client.call(PATH, { inXinjiang: i % 2 === 0 })).code).toBe(Code.ok);
    const limited = await client.call(PATH, { in_foreign: true });
    expect(limited.code).toBe(Code.tooManyRequests);
    expect((await row(user.id)).in_foreign).toBe(0);
    // Another account is not held back by this one.
    const { client: other } = await customer();
    expect((await other.call(PATH, { in_foreign: true })).code).toBe(Code.ok);
  });
});

describe("the subscription link follows the toggles at once", () => {
  test("clash and v2ray files fetched before and after saving: DNS, rules and English names", async () => {
    const agent = await saveNode(server, {
      name: "日本",
      country: { code: "JP" },
      ip: "203.0.113.77",
      host: "jp.example.com",
    });
    await saveLine(
      server.context,
      lineInput.parse({ name: "🇯🇵 日本 家宽", agentID: agent._id, protocol: "vmesh_tcp", bridge: "none" }),
    );
    const { client, user } = await customer({ traffic: 10 * GB });
    const link = (format: string) => `${server.url}/api/subscript/${format}/${user.id}/${user.userkey}`;
    const clash = async () =>
      parse(await (await fetch(link("clash"))).text()) as {
        dns?: { nameserver: string[] };
        proxies: { name: string }[];
        rules: string[];
      };
    const v2rayNames = async () =>
      Buffer.from(await (await fetch(link("v2ray"))).text(), "base64")
        .toString("utf8")
        .trim()
        .split("\n")
        .filter((line) => !line.startsWith("#"))
        .map((uri) => JSON.parse(Buffer.from(uri.slice("vmess://".length), "base64").toString("utf8")).ps);

    // Fetched twice first, so a cached rendering exists when the toggles change.
    for (let i = 0; i < 2; i++) {
      const before = await clash();
      expect(before.dns).toBeUndefined();
      expect(before.rules).toContain("GEOIP,CN,DIRECT");
      expect(before.proxies.map((proxy) => proxy.name)).toContain("🇯🇵 日本 家宽 [1x]");
    }
    expect(await v2rayNames()).toContain("🇯🇵 日本 家宽 [1x]");

    expect((await client.call(PATH, { inXinjiang: true, use_english_node: true })).code).toBe(Code.ok);
    const released = await clash();
    expect(released.dns?.nameserver).toEqual(["223.5.5.5", "119.29.29.29"]);
    expect(released.rules).toContain("GEOIP,CN,DIRECT,no-resolve");
    expect(released.proxies.map((proxy) => proxy.name)).toContain("🇯🇵 Japan Residential [1x]");
    expect(await v2rayNames()).toContain("🇯🇵 Japan Residential [1x]");

    expect((await client.call(PATH, { in_foreign: true })).code).toBe(Code.ok);
    const abroad = await clash();
    expect(abroad.dns?.nameserver).toEqual(["1.1.1.1", "8.8.8.8"]);
    expect(abroad.rules.join("\n")).not.toContain("CN");

    expect(
      (await client.call(PATH, { inXinjiang: false, in_foreign: false, use_english_node: false })).code,
    ).toBe(Code.ok);
    const back = await clash();
    expect(back.dns).toBeUndefined();
    expect(back.rules).toContain("GEOIP,CN,DIRECT");
    expect(back.proxies.map((proxy) => proxy.name)).toContain("🇯🇵 日本 家宽 [1x]");
  });
});
