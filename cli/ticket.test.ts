/**
 * `ferry ticket list|show|reply|close`, run as real processes against the data directory of a
 * running server: what customers opened on the web is listed, a reply from the CLI reaches the
 * customer like one from the web (conversation, bell notice, bot message), a closed ticket takes
 * no more replies from either side.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Ticket } from "../src/modules/feedback/schema.ts";
import type { Notice } from "../src/modules/notice/schema.ts";
import { newId } from "../src/rpc/ids.ts";
import { loggedInClient, type TestServer } from "../tests/harness.ts";
import { expectHelp, expectRefused, type FerryIn, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli()));
afterAll(() => server?.close());

type Client = Awaited<ReturnType<typeof loggedInClient>>;

async function open(who: Client, title: string, desc = "描述") {
  const answer = await who.client.call<Ticket>("/api/feedback/create", { title, desc, imageUrl: "" });
  expect(answer.code).toBe(0);
  return answer.data;
}

const refresh = async (who: Client, id: string) =>
  (await who.client.call<Ticket>("/api/feedback/refresh", { id })).data;

test("every ticket command has --help", async () => {
  await expectHelp([
    [["ticket"], ["list", "show", "reply", "close"]],
    [
      ["ticket", "list"],
      ["--status", "open", "responsed", "close", "--data", "--json"],
    ],
    [
      ["ticket", "show"],
      ["<id>", "--json"],
    ],
    [
      ["ticket", "reply"],
      ["<id>", "<text>", "notice"],
    ],
    [["ticket", "close"], ["<id>"]],
  ]);
});

test("list and show what customers opened, filtered by status; reply and close like the web", async () => {
  expect(await cli.ok(["ticket", "list"])).toBe("no tickets\n");

  const alice = await loggedInClient(server);
  const bob = await loggedInClient(server);
  await server.context.db.run(
    "INSERT INTO telegram_bindings (user_id, chat_id, bind_time) VALUES (?, ?, ?)",
    alice.user.id,
    9001,
    Date.now(),
  );
  const first = await open(alice, "节点连不上", "香港节点全部超时");
  const second = await open(bob, "发票");

  const all = await cli.json<Ticket[]>(["ticket", "list"]);
  expect(all.map((t) => [t._id, t.email, t.status])).toEqual([
    [second._id, bob.email, "open"],
    [first._id, alice.email, "open"],
  ]);
  const text = await cli.ok(["ticket", "list"]);
  expect(text).toContain(`${first._id}  open`);
  expect(text).toContain(alice.email);
  expect(text).toContain("节点连不上");

  expect(await cli.json<Ticket>(["ticket", "show", first._id])).toEqual(await refresh(alice, first._id));
  const shown = await cli.ok(["ticket", "show", first._id]);
  expect(shown).toContain("title    节点连不上");
  expect(shown).toContain("status   open (waiting for support)");
  expect(shown).toContain("香港节点全部超时");

  // A reply from the CLI: the conversation, the status, one bell notice and one bot message.
  expect(await cli.ok(["ticket", "reply", first._id, "  已修复，请更新订阅  "])).toBe(
    `replied to ticket ${first._id} (节点连不上) of ${alice.email}\n`,
  );
  const answered = await refresh(alice, first._id);
  expect(answered.status).toBe("responsed");
  expect(answered.comments.map((c) => [c.type, c.text])).toEqual([["ADMIN", "已修复，请更新订阅"]]);
  const notices = (await alice.client.call<Notice[]>("/api/user_notive/list")).data;
  expect(notices.filter((n) => n.href === `/#/feedback?id=${first._id}`)).toEqual([
    { _id: expect.any(String), desc: "您的工单「节点连不上」有新回复", href: `/#/feedback?id=${first._id}` },
  ]);
  expect((await bob.client.call<Notice[]>("/api/user_notive/list")).data).toEqual([]);
  const messages = await server.context.db.all<{ text: string }>(
    "SELECT text FROM telegram_outbox WHERE chat_id = ?",
    9001,
  );
  expect(messages.map((m) => m.text)).toEqual([
    `您的工单「节点连不上」有新回复：\n已修复，请更新订阅\n${server.url}/#/feedback?id=${first._id}`,
  ]);
  expect(await cli.ok(["ticket", "show", first._id])).toContain("ADMIN (command line)\n已修复，请更新订阅");

  expect((await cli.json<Ticket[]>(["ticket", "list", "--status", "responsed"])).map((t) => t._id)).toEqual([
    first._id,
  ]);
  expect((await cli.json<Ticket[]>(["ticket", "list", "--status", "open"])).map((t) => t._id)).toEqual([
    second._id,
  ]);

  // Closed: listed as such; neither the CLI nor the customer can reply any more.
  expect(await cli.ok(["ticket", "close", first._id])).toBe(`closed ticket ${first._id} (节点连不上)\n`);
  expect(await cli.ok(["ticket", "show", first._id])).toMatch(/\nclosed {3}\d{4}-\d\d-\d\d/);
  expect((await cli.json<Ticket[]>(["ticket", "list", "--status", "close"])).map((t) => t._id)).toEqual([
    first._id,
  ]);
  await expectRefused([[cli.withData(["ticket", "reply", first._id, "还有问题吗"]), /is closed/]]);
  const fromWeb = await alice.client.call("/api/feedback/response", {
    id: first._id,
    desc: "还有",
    imageUrl: "",
  });
  expect({ code: fromWeb.code, msg: fromWeb.msg }).toEqual({ code: 1035, msg: "该工单已关闭" });
  expect((await refresh(alice, first._id)).comments.length).toBe(1);
});

test("bad input is one line and exit 1", async () => {
  const unknown = newId();
  await expectRefused([
    [cli.withData(["ticket", "show", "nope"]), /not a ticket id: nope/],
    [cli.withData(["ticket", "show", unknown]), new RegExp(`no ticket ${unknown}`)],
    [cli.withData(["ticket", "reply", unknown, "hi"]), new RegExp(`no ticket ${unknown}`)],
    [cli.withData(["ticket", "reply", unknown, "   "]), /<text>: 描述不能为空/],
    [cli.withData(["ticket", "close", "../x"]), /not a ticket id/],
    [cli.withData(["ticket", "close", unknown]), new RegExp(`no ticket ${unknown}`)],
    [cli.withData(["ticket", "list", "--status", "pending"]), /--status/],
    [cli.withData(["ticket", "reply", unknown]), /missing required argument 'text'/],
  ]);
});
