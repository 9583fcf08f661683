/** The bell notices: /api/user_notive/list and /api/user_notive/clicked. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { Code, type RpcError } from "../../rpc/codes.ts";
import type { Notice } from "./schema.ts";
import { createNotice } from "./service.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const ids = (notices: Notice[]) => notices.map((n) => n._id);

async function clickRows(userId: string): Promise<number> {
  return (
    (
      await server.context.db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM notice_clicks WHERE user_id = ?",
        userId,
      )
    )?.n ?? -1
  );
}

test("visitors get 1002 for both calls", async () => {
  const visitor = new ApiClient(server.url);
  expect((await visitor.call("/api/user_notive/list")).code).toBe(1002);
  expect((await visitor.call("/api/user_notive/clicked", { noticeId: "a".repeat(24) })).code).toBe(1002);
});

test("a user sees their own and everyone's notices, not another user's; a clicked notice disappears", async () => {
  const alice = await loggedInClient(server);
  const bob = await loggedInClient(server);
  const forAll = await createNotice(server.context, {
    userId: null,
    desc: "全站维护通知",
    href: "/#/feedback",
  });
  await Bun.sleep(2);
  const forAlice = await createNotice(server.context, {
    userId: alice.user.id,
    desc: "您的工单有新回复",
    href: "/#/feedback",
  });
  await Bun.sleep(2);
  const forBob = await createNotice(server.context, { userId: bob.user.id, desc: "Bob 的私信" });

  const list = await alice.client.call<Notice[]>("/api/user_notive/list");
  expect(list.code).toBe(0);
  // Newest first, with the seed's fields.
  expect(list.data).toEqual([
    { _id: forAlice, href: "/#/feedback", desc: "您的工单有新回复" },
    { _id: forAll, href: "/#/feedback", desc: "全站维护通知" },
  ]);
  expect(ids((await bob.client.call<Notice[]>("/api/user_notive/list")).data).sort()).toEqual(
    [forAll, forBob].sort(),
  );

  // Clicking hides it for Alice only.
  expect((await alice.client.call("/api/user_notive/clicked", { noticeId: forAll })).code).toBe(0);
  expect(ids((await alice.client.call<Notice[]>("/api/user_notive/list")).data)).toEqual([forAlice]);
  expect(ids((await bob.client.call<Notice[]>("/api/user_notive/list")).data)).toContain(forAll);
  expect((await alice.client.call("/api/user_notive/clicked", { noticeId: forAlice })).code).toBe(0);
  expect((await alice.client.call<Notice[]>("/api/user_notive/list")).data).toEqual([]);

  // Clicking again is harmless.
  expect((await alice.client.call("/api/user_notive/clicked", { noticeId: forAlice })).code).toBe(0);
  expect(await clickRows(alice.user.id)).toBe(2);

  // Alice cannot click Bob's notice away: Bob still sees it and no click of hers is stored.
  const foreign = await alice.client.call("/api/user_notive/clicked", { noticeId: forBob });
  expect(foreign.code).not.toBe(999);
  expect(ids((await bob.client.call<Notice[]>("/api/user_notive/list")).data)).toContain(forBob);
  expect(await clickRows(alice.user.id)).toBe(2);
  const bobsClick = await server.context.db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM notice_clicks WHERE notice_id = ?",
    forBob,
  );
  expect(bobsClick?.n).toBe(0);
});

test("an unknown notice id is harmless and a malformed one is 1000", async () => {
  const { client, user } = await loggedInClient(server);
  const unknown = await client.call("/api/user_notive/clicked", { noticeId: "0".repeat(24) });
  expect(unknown.code).not.toBe(999);
  expect(await clickRows(user.id)).toBe(0);
  for (const noticeId of ["nope", 12, "", "'; DROP TABLE notices; --"]) {
    expect((await client.call("/api/user_notive/clicked", { noticeId })).code).toBe(1000);
  }
  expect((await client.call("/api/user_notive/clicked", {})).code).toBe(1000);
});

describe("notice links (issue 11, finding 8)", () => {
  test("a link of another scheme than http(s) is refused with 1000 and nothing is saved", async () => {
    const count = async () =>
      (await server.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM notices"))?.n ?? -1;
    const before = await count();
    for (const href of [
      "javascript:alert(document.cookie)",
      " JavaScript:alert(1)",
      "java\tscript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "vbscript:msgbox(1)",
      "file:///etc/passwd",
      "alipays://platformapi/startapp",
    ]) {
      let refused: unknown = null;
      try {
        await createNotice(server.context, { userId: null, desc: "点击查看", href });
      } catch (error) {
        refused = error;
      }
      expect({ href, code: (refused as RpcError | null)?.code }).toEqual({ href, code: Code.badInput });
      expect((refused as Error).message).toContain("通知链接");
    }
    expect(await count()).toBe(before);
  });

  test("relative and http(s) links are saved and listed", async () => {
    const { client, user } = await loggedInClient(server);
    const hrefs = [
      "#/feedback",
      "/#/order",
      "/about.html",
      "https://example.com/news",
      "http://example.com/",
    ];
    for (const href of hrefs) await createNotice(server.context, { userId: user.id, desc: href, href });
    const listed = (await client.call<Notice[]>("/api/user_notive/list")).data
      .filter((n) => hrefs.includes(n.desc))
      .map((n) => n.href);
    expect(listed.sort()).toEqual([...hrefs].sort());
  });

  test("a notice saved before links were checked is listed without its link", async () => {
    const { client, user } = await loggedInClient(server);
    await server.context.db.run(
      'INSERT INTO notices (id, user_id, href, "desc", create_time) VALUES (?, ?, ?, ?, ?)',
      "f".repeat(24),
      user.id,
      "javascript:alert(1)",
      "旧通知",
      Date.now(),
    );
    const listed = (await client.call<Notice[]>("/api/user_notive/list")).data;
    expect(listed.filter((n) => n.desc === "旧通知")).toEqual([
      { _id: "f".repeat(24), href: "", desc: "旧通知" },
    ]);
  });
});
