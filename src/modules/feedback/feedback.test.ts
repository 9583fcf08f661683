/**
 * Tickets over real HTTP (seed 000 §2 Feedback, §4, §5, §8 1035): each call's success and seed
 * messages, who may read, answer and close what, the status a reply leaves, the owner's bell notice
 * and the bot messages an answer queues, images only from the caller's own uploads.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bindChat, outboxTexts } from "../../../tests/fakes/telegram.ts";
import { ApiClient, loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { Code } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { downloadPath, FileMsg, type UploadAnswer } from "../file/schema.ts";
import type { Notice } from "../notice/schema.ts";
import { TICKETS_PER_DAY, type Ticket, TicketMsg, viewerStatus } from "./schema.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

type Client = Awaited<ReturnType<typeof loggedInClient>>;

/** A real 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** Uploads the PNG through /api/file/upload as `who`; answers the download path the SPA would send. */
async function upload(who: Client): Promise<string> {
  const form = new FormData();
  form.append("file", new File([PNG], "shot.png", { type: "image/png" }));
  const response = await fetch(`${server.url}/api/file/upload`, {
    method: "POST",
    body: form,
    headers: { cookie: who.client.cookieHeader() },
  });
  const answer = (await response.json()) as UploadAnswer;
  return downloadPath(answer.file.filename);
}

async function open(who: Client, title = "节点连不上", desc = "香港节点全部超时", imageUrl = "") {
  const answer = await who.client.call<Ticket>("/api/feedback/create", { title, desc, imageUrl });
  expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
  return answer.data;
}

const list = async (who: Client) => (await who.client.call<Ticket[]>("/api/feedback/my_list")).data;
const refresh = (who: Client, id: string) => who.client.call<Ticket>("/api/feedback/refresh", { id });
const reply = (who: Client, id: string, desc: string, imageUrl = "") =>
  who.client.call<Ticket>("/api/feedback/response", { id, desc, imageUrl });
const close = (who: Client, id: string) => who.client.call<Ticket>("/api/feedback/close", { id });
const notices = async (who: Client) => (await who.client.call<Notice[]>("/api/user_notive/list")).data;

const count = async (sql: string, ...params: string[]) =>
  (await server.context.db.get<{ n: number }>(sql, ...params))?.n ?? -1;
const ticketCount = async () => await count("SELECT COUNT(*) AS n FROM tickets");
const commentCount = async () => await count("SELECT COUNT(*) AS n FROM ticket_comments");

/** Binds a Telegram chat to the account, as the bot does after /bind. */

test("visitors get 1002 for every call", async () => {
  const visitor = new ApiClient(server.url);
  const id = newId();
  for (const [path, payload] of [
    ["/api/feedback/my_list", {}],
    ["/api/feedback/create", { title: "t", desc: "d", imageUrl: "" }],
    ["/api/feedback/response", { id, desc: "d", imageUrl: "" }],
    ["/api/feedback/close", { id }],
    ["/api/feedback/refresh", { id }],
  ] as const) {
    expect({ path, code: (await visitor.call(path, payload)).code }).toEqual({ path, code: 1002 });
  }
});

describe("create", () => {
  test("opens a ticket with the seed's fields, trimmed, status open, no comments", async () => {
    const alice = await loggedInClient(server);
    const ticket = await open(alice, "  节点连不上 ", "\n香港节点全部超时  ");
    expect(ticket).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      title: "节点连不上",
      desc: "香港节点全部超时",
      imageUrl: "",
      status: "open",
      createTime: expect.any(Number),
      updateTime: ticket.createTime,
      closeTime: 0,
      email: alice.email,
      comments: [],
    });
    expect((await refresh(alice, ticket._id)).data).toEqual(ticket);
  });

  test("标题不能为空 / 描述不能为空 / too long: refused with 1000 and nothing stored", async () => {
    const alice = await loggedInClient(server);
    const before = await ticketCount();
    for (const [payload, message] of [
      [{ title: "", desc: "描述", imageUrl: "" }, TicketMsg.titleEmpty],
      [{ title: "   ", desc: "描述", imageUrl: "" }, TicketMsg.titleEmpty],
      [{ title: "标题", desc: "", imageUrl: "" }, TicketMsg.descEmpty],
      [{ title: "标题", desc: " \n ", imageUrl: "" }, TicketMsg.descEmpty],
      [{ title: "标".repeat(61), desc: "描述", imageUrl: "" }, TicketMsg.titleTooLong],
      [{ title: "标题", desc: "描".repeat(2001), imageUrl: "" }, TicketMsg.descTooLong],
    ] as const) {
      const answer = await alice.client.call("/api/feedback/create", payload);
      expect({ payload, code: answer.code }).toEqual({ payload, code: Code.badInput });
      expect(answer.msg).toContain(message);
    }
    expect(await ticketCount()).toBe(before);
  });

  test("an image of the caller's own upload is kept; someone else's or a made-up one is refused", async () => {
    const alice = await loggedInClient(server);
    const bob = await loggedInClient(server);
    const mine = await upload(alice);
    const ticket = await open(alice, "截图", "见附图", mine);
    expect(ticket.imageUrl).toBe(mine);
    expect((await alice.client.get(mine)).status).toBe(200);

    const before = await ticketCount();
    const bobs = await upload(bob);
    for (const imageUrl of [bobs, downloadPath(`${"a".repeat(32)}.png`), "/etc/passwd", "../ferry.db"]) {
      const answer = await alice.client.call("/api/feedback/create", { title: "t", desc: "d", imageUrl });
      expect({ imageUrl, code: answer.code }).toEqual({ imageUrl, code: Code.badInput });
      expect(answer.msg).toContain(FileMsg.notYours);
    }
    expect(await ticketCount()).toBe(before);
  });

  test(`at most ${TICKETS_PER_DAY} new tickets per account in 24 hours (1005), others unaffected`, async () => {
    const spammer = await loggedInClient(server);
    for (let i = 0; i < TICKETS_PER_DAY; i++) await open(spammer, `第${i}个`);
    const refused = await spammer.client.call("/api/feedback/create", {
      title: "再来",
      desc: "d",
      imageUrl: "",
    });
    expect({ code: refused.code, msg: refused.msg }).toEqual({
      code: Code.tooManyRequests,
      msg: TicketMsg.tooMany,
    });
    expect((await list(spammer)).length).toBe(TICKETS_PER_DAY);
    await open(await loggedInClient(server));
  });
});

describe("who sees and does what", () => {
  let alice: Client;
  let bob: Client;
  let admin: Client;
  let ticket: Ticket;

  beforeAll(async () => {
    alice = await loggedInClient(server);
    bob = await loggedInClient(server);
    admin = await loggedInClient(server, { role: "admin" });
    ticket = await open(alice, "Alice 的工单", "只有我和管理员能看到");
  });

  test("a customer lists only their own tickets; an admin lists every ticket with the creator's e-mail", async () => {
    const bobs = await open(bob, "Bob 的工单");
    expect((await list(alice)).map((t) => t._id)).toEqual([ticket._id]);
    expect((await list(bob)).map((t) => t._id)).toEqual([bobs._id]);
    const all = await list(admin);
    expect(all.find((t) => t._id === ticket._id)?.email).toBe(alice.email);
    expect(all.find((t) => t._id === bobs._id)?.email).toBe(bob.email);
    // Latest activity first.
    const times = all.map((t) => t.updateTime);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect((await refresh(admin, ticket._id)).data.email).toBe(alice.email);
  });

  test("another customer can neither refresh, answer nor close it, and learns nothing (1004 / 1003)", async () => {
    const comments = await commentCount();
    const refreshed = await refresh(bob, ticket._id);
    expect({ code: refreshed.code, msg: refreshed.msg, data: refreshed.data as unknown }).toEqual({
      code: Code.notFound,
      msg: TicketMsg.notFound,
      data: null,
    });
    // The same answer as for a ticket that does not exist.
    const missing = await refresh(bob, newId());
    expect({ code: missing.code, msg: missing.msg }).toEqual({ code: refreshed.code, msg: refreshed.msg });

    const replied = await reply(bob, ticket._id, "我也来说两句");
    expect({ code: replied.code, msg: replied.msg }).toEqual({
      code: Code.notFound,
      msg: TicketMsg.notFound,
    });
    const closed = await close(bob, ticket._id);
    expect({ code: closed.code, msg: closed.msg }).toEqual({
      code: Code.forbidden,
      msg: TicketMsg.forbidden,
    });

    expect(await commentCount()).toBe(comments);
    expect((await refresh(alice, ticket._id)).data).toEqual(ticket);
  });

  test("a yunying account is a customer here: no one else's tickets, no closing", async () => {
    const yunying = await loggedInClient(server, { role: "yunying" });
    expect(await list(yunying)).toEqual([]);
    expect((await refresh(yunying, ticket._id)).code).toBe(Code.notFound);
    expect((await close(yunying, ticket._id)).code).toBe(Code.forbidden);
  });

  test("malformed ids are 1000", async () => {
    for (const id of ["", "nope", 12, "'; DROP TABLE tickets; --"]) {
      expect((await alice.client.call("/api/feedback/refresh", { id })).code).toBe(Code.badInput);
      expect((await alice.client.call("/api/feedback/close", { id })).code).toBe(Code.badInput);
    }
  });
});

describe("conversation, notices and bot messages", () => {
  test("replies alternate the status; an admin's answer gives the owner exactly one notice and one bot message", async () => {
    const alice = await loggedInClient(server);
    const bob = await loggedInClient(server);
    const admin = await loggedInClient(server, { role: "admin" });
    await bindChat(server, alice.user.id, 7001);
    await bindChat(server, bob.user.id, 7002);
    await bindChat(server, admin.user.id, 7003);
    const ticket = await open(alice, "续费后没到账", "订单已支付");
    expect((await outboxTexts(server, 7003)).at(-1)).toBe(
      `新工单「续费后没到账」（${alice.email}）\n订单已支付\n${server.url}/#/feedback?id=${ticket._id}`,
    );
    const aliceNotices = (await notices(alice)).length;
    const bobNotices = (await notices(bob)).length;

    const answered = await reply(admin, ticket._id, "  已为您补发  ");
    expect(answered.code).toBe(0);
    expect(answered.data.status).toBe("responsed");
    // The admin learns which admin answered; the customer never sees staff accounts.
    expect(answered.data.comments).toEqual([
      {
        type: "ADMIN",
        text: "已为您补发",
        imageUrl: "",
        updateTime: answered.data.updateTime,
        staff: admin.email,
      },
    ]);
    const seenByAlice = (await refresh(alice, ticket._id)).data.comments;
    expect(seenByAlice).toEqual([
      { type: "ADMIN", text: "已为您补发", imageUrl: "", updateTime: answered.data.updateTime },
    ]);
    expect(JSON.stringify(await alice.client.call("/api/feedback/my_list"))).not.toContain(admin.email);
    expect(viewerStatus(answered.data, "user")).toBe("responsed");
    expect(viewerStatus(answered.data, "admin")).toBe("open");

    const aliceNow = await notices(alice);
    expect(aliceNow.length).toBe(aliceNotices + 1);
    expect(aliceNow[0]).toEqual({
      _id: expect.any(String),
      desc: "您的工单「续费后没到账」有新回复",
      href: `/#/feedback?id=${ticket._id}`,
    });
    expect((await notices(bob)).length).toBe(bobNotices);
    expect(await outboxTexts(server, 7001)).toEqual([
      `您的工单「续费后没到账」有新回复：\n已为您补发\n${server.url}/#/feedback?id=${ticket._id}`,
    ]);
    expect(await outboxTexts(server, 7002)).toEqual([]);

    // The customer writes back with an image: open again, the admins are told, no notice for anyone.
    const image = await upload(alice);
    const back = await reply(alice, ticket._id, "收到，谢谢", image);
    expect(back.data.status).toBe("open");
    expect(back.data.comments.map((c) => [c.type, c.text, c.imageUrl])).toEqual([
      ["ADMIN", "已为您补发", ""],
      ["USER", "收到，谢谢", image],
    ]);
    expect(viewerStatus(back.data, "user")).toBe("open");
    expect(viewerStatus(back.data, "admin")).toBe("responsed");
    expect((await notices(alice)).length).toBe(aliceNotices + 1);
    expect((await outboxTexts(server, 7003)).at(-1)).toBe(
      `工单「续费后没到账」有用户回复（${alice.email}）\n收到，谢谢\n${server.url}/#/feedback?id=${ticket._id}`,
    );
    expect((await outboxTexts(server, 7001)).length).toBe(1);

    // Both see the same conversation; only the admin's copy names the answering admin.
    const adminView = (await refresh(admin, ticket._id)).data;
    const aliceView = (await refresh(alice, ticket._id)).data;
    expect(adminView.comments[0]?.staff).toBe(admin.email);
    expect({
      ...adminView,
      comments: adminView.comments.map(({ staff: _staff, ...comment }) => comment),
    }).toEqual(aliceView);
  });

  test("描述不能为空 on a reply; an image not the replier's own is refused; nothing stored", async () => {
    const alice = await loggedInClient(server);
    const admin = await loggedInClient(server, { role: "admin" });
    const ticket = await open(alice);
    const comments = await commentCount();
    for (const desc of ["", "   "]) {
      const answer = await reply(alice, ticket._id, desc);
      expect(answer.code).toBe(Code.badInput);
      expect(answer.msg).toContain(TicketMsg.descEmpty);
    }
    // Even an admin attaches only their own uploads.
    const alicesImage = await upload(alice);
    const answer = await reply(admin, ticket._id, "见图", alicesImage);
    expect({ code: answer.code, msg: answer.msg }).toEqual({ code: Code.badInput, msg: FileMsg.notYours });
    expect(await commentCount()).toBe(comments);
    expect((await refresh(alice, ticket._id)).data.status).toBe("open");
  });

  test("without a site origin the bot message carries no link", async () => {
    const alice = await loggedInClient(server);
    const admin = await loggedInClient(server, { role: "admin" });
    await bindChat(server, alice.user.id, 7101);
    const ticket = await open(alice, "无链接");
    await server.context.settings.update({ site_url: "" });
    try {
      await reply(admin, ticket._id, "好的");
    } finally {
      await server.context.settings.update({ site_url: server.url });
    }
    expect(await outboxTexts(server, 7101)).toEqual(["您的工单「无链接」有新回复：\n好的"]);
  });
});

describe("close", () => {
  test("only an admin closes (1003 for the owner); after that every reply is 1035 该工单已关闭", async () => {
    const alice = await loggedInClient(server);
    const admin = await loggedInClient(server, { role: "admin" });
    const ticket = await open(alice);

    const byOwner = await close(alice, ticket._id);
    expect({ code: byOwner.code, msg: byOwner.msg }).toEqual({
      code: Code.forbidden,
      msg: TicketMsg.forbidden,
    });
    expect((await refresh(alice, ticket._id)).data.status).toBe("open");

    const closed = await close(admin, ticket._id);
    expect(closed.code).toBe(0);
    expect(closed.data.status).toBe("close");
    expect(closed.data.closeTime).toBeGreaterThanOrEqual(ticket.createTime);
    expect(viewerStatus(closed.data, "user")).toBe("close");
    expect((await refresh(alice, ticket._id)).data).toMatchObject({
      status: "close",
      closeTime: closed.data.closeTime,
    });

    const comments = await commentCount();
    const noticesBefore = (await notices(alice)).length;
    for (const who of [alice, admin]) {
      const answer = await reply(who, ticket._id, "还在吗");
      expect({ code: answer.code, msg: answer.msg }).toEqual({
        code: Code.ticketClosed,
        msg: TicketMsg.closed,
      });
    }
    expect(await commentCount()).toBe(comments);
    expect((await notices(alice)).length).toBe(noticesBefore);

    // Closing again is harmless; an unknown ticket is 1004 for the admin too.
    expect((await close(admin, ticket._id)).data.status).toBe("close");
    expect((await close(admin, newId())).code).toBe(Code.notFound);
  });
});

test("viewerStatus: the last comment from the other party is 已回复 for that viewer (seed 000 §4)", () => {
  const comment = (type: "USER" | "ADMIN") => ({ type, text: "x", imageUrl: "", updateTime: 1 });
  expect(viewerStatus({ status: "open", comments: [] }, "user")).toBe("open");
  // The opening message is the customer's: a new ticket waits for an admin.
  expect(viewerStatus({ status: "open", comments: [] }, "admin")).toBe("responsed");
  expect(viewerStatus({ status: "responsed", comments: [comment("ADMIN")] }, "user")).toBe("responsed");
  expect(viewerStatus({ status: "open", comments: [comment("ADMIN"), comment("USER")] }, "admin")).toBe(
    "responsed",
  );
  expect(viewerStatus({ status: "close", comments: [comment("ADMIN")] }, "user")).toBe("close");
});
