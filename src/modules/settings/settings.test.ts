/** Site settings over HTTP: the public /api/host/get and the admin config calls. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ApiClient,
  loggedInClient,
  startWithAdmin,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { sinkSettings, startMailSink } from "../../../tests/mail-sink.ts";
import { tx } from "../../db/db.ts";
import { startServer } from "../../server.ts";
import { transformPassword } from "../user/password.ts";
import { createUser } from "../user/service.ts";
import { type HostInfo, maskSettingValue, SECRET_MASK, type Settings } from "./schema.ts";
import { SettingsStore } from "./service.ts";

let server: TestServer;
let admin: ApiClient;

beforeAll(async () => ({ server, admin } = await startWithAdmin()));
afterAll(() => server?.close());

async function storedValue(key: string): Promise<unknown> {
  const row = await server.context.db.get<{ value: string }>("SELECT value FROM settings WHERE key = ?", key);
  return row ? JSON.parse(row.value) : undefined;
}

async function getConfig() {
  const answer = await admin.call<Settings>("/api/admin/config/get");
  expect(answer.code).toBe(0);
  return answer.data;
}

/** The raw, still-encoded answer body plus its decoded text. */
async function rawCall(client: ApiClient, path: string, payload: unknown) {
  const response = await client.raw(
    path,
    JSON.stringify({ data: Buffer.from(JSON.stringify(payload)).toString("base64") }),
  );
  const raw = await response.text();
  const decoded = Buffer.from((JSON.parse(raw) as { data: string }).data, "base64").toString("utf8");
  return { raw, decoded, answer: JSON.parse(decoded) as { code: number; data: Settings; msg: string } };
}

describe("/api/host/get", () => {
  test("is public and shows the announcement settings the admin saved", async () => {
    const visitor = new ApiClient(server.url);
    const before = await visitor.call<HostInfo>("/api/host/get");
    expect(before.code).toBe(0);
    expect(before.data.preferDomain).toBe("");
    expect(before.data.notice.notice_show).toBe(false);

    const saved = await admin.call("/api/admin/config/set_config", {
      preferDomain: "go.ferry.example",
      notice_show: true,
      notice_title: "春节公告",
      notice_content: "节日期间照常服务",
      notice_mark_red: true,
      contact_info: "support@ferry.example",
      group_link: "https://t.me/ferry",
    });
    expect(saved.code).toBe(0);

    const after = await visitor.call<HostInfo>("/api/host/get");
    expect(after.code).toBe(0);
    expect(after.data.preferDomain).toBe("go.ferry.example");
    expect(after.data.contact_info).toBe("support@ferry.example");
    expect(after.data.group_link).toBe("https://t.me/ferry");
    expect(after.data.notice).toMatchObject({
      notice_show: true,
      notice_title: "春节公告",
      notice_content: "节日期间照常服务",
      notice_mark_red: true,
    });
    // Nothing beyond the public site information leaks through this call.
    expect(JSON.stringify(after.data)).not.toContain("smtp");
    expect(JSON.stringify(after.data)).not.toContain("alipay");
  });

  test("says whether 找回密码 can mail a confirmation (mail and the site address both set up)", async () => {
    const resetByMail = async () =>
      (await new ApiClient(server.url).call<HostInfo>("/api/host/get")).data.resetByMail;
    expect(await resetByMail()).toBe(false);
    const sink = await startMailSink();
    try {
      await admin.call("/api/admin/config/set_config", sinkSettings(sink));
      expect(await resetByMail()).toBe(true);
      await admin.call("/api/admin/config/set_config", { site_url: "", preferDomain: "" });
      expect(await resetByMail()).toBe(false);
    } finally {
      await admin.call("/api/admin/config/set_config", {
        smtp_host: "",
        smtp_port: 465,
        smtp_secure: true,
        smtp_from: "",
        site_url: server.url,
      });
      await sink.close();
    }
  });

  test("tells the SPA when the page host is the agency host", async () => {
    await admin.call("/api/admin/config/set_config", { agency_host: "agency.example" });
    const visitor = new ApiClient(server.url);
    const onAgency = await visitor.call<HostInfo & { agencyMode: boolean }>("/api/host/get");
    expect(onAgency.data.agencyMode).toBe(false);
    const response = await fetch(`${server.url}/api/host/get`, {
      method: "POST",
      headers: { host: "agency.example", "content-type": "application/json" },
      body: "",
    });
    const body = (await response.json()) as { data: string };
    const decoded = JSON.parse(Buffer.from(body.data, "base64").toString("utf8"));
    expect(decoded.code).toBe(0);
    expect(decoded.data.agencyMode).toBe(true);
  });
});

describe("admin config: who may call it", () => {
  test("normal, channel and yunying users get 1003, visitors 1002, for get and set", async () => {
    const before = await getConfig();
    const visitor = new ApiClient(server.url);
    for (const path of ["/api/admin/config/get", "/api/admin/config/set_config"]) {
      expect((await visitor.call(path, { notice_title: "hacked" })).code).toBe(1002);
    }
    for (const role of ["normal", "channel", "yunying"] as const) {
      const { client } = await loggedInClient(server, { role });
      for (const path of ["/api/admin/config/get", "/api/admin/config/set_config"]) {
        const answer = await client.call(path, { notice_title: "hacked" });
        expect({ role, path, code: answer.code }).toEqual({ role, path, code: 1003 });
        expect(answer.data).toBeNull();
      }
    }
    expect((await getConfig()).notice_title).toBe(before.notice_title);
  });

  test("a user named in admin_id may use it", async () => {
    const email = uniqueEmail("promoted");
    const user = await createUser(server.context, {
      email,
      passwordDigest: transformPassword("correct-horse-1"),
    });
    const client = new ApiClient(server.url);
    expect((await client.login(email, "correct-horse-1")).code).toBe(0);
    expect((await client.call("/api/admin/config/get")).code).toBe(1003);
    expect((await admin.call("/api/admin/config/set_config", { admin_id: [user.id] })).code).toBe(0);
    expect((await client.call("/api/admin/config/get")).code).toBe(0);
    expect((await admin.call("/api/admin/config/set_config", { admin_id: [] })).code).toBe(0);
    expect((await client.call("/api/admin/config/get")).code).toBe(1003);
  });

  test("yunying_list and admin_id match confirmed e-mails in any letter case", async () => {
    const email = uniqueEmail("listed");
    await createUser(server.context, {
      email,
      passwordDigest: transformPassword("correct-horse-1"),
      emailVerified: true,
    });
    const client = new ApiClient(server.url);
    expect((await client.login(email, "correct-horse-1")).code).toBe(0);
    expect(
      (await admin.call("/api/admin/config/set_config", { yunying_list: [email.toUpperCase()] })).code,
    ).toBe(0);
    expect((await client.call<{ type: string }>("/api/user/userinfo")).data.type).toBe("yunying");
    expect((await client.call("/api/yunying/anything")).code).toBe(1004);
    expect((await client.call("/api/admin/config/get")).code).toBe(1003);
    expect((await admin.call("/api/admin/config/set_config", { yunying_list: [] })).code).toBe(0);
    expect((await client.call<{ type: string }>("/api/user/userinfo")).data.type).toBe("normal");
  });
});

describe("/api/admin/config/get and set_config", () => {
  test("get lists every setting with its typed default", async () => {
    const config = await getConfig();
    expect(config.timezone).toBe("Asia/Shanghai");
    expect(config.min_charge_money).toBe(500);
    expect(config.smtp_port).toBe(465);
    expect(config.smtp_secure).toBe(true);
    expect(config.admin_id).toEqual([]);
  });

  test("saving some settings leaves the others as they were", async () => {
    await admin.call("/api/admin/config/set_config", {
      contentUrl_guonei: "https://cn.example",
      usdtCheckTime: 45,
    });
    const answer = await admin.call<Settings>("/api/admin/config/set_config", { inviteRule: "邀请好友返利" });
    expect(answer.code).toBe(0);
    expect(answer.data.inviteRule).toBe("邀请好友返利");
    const config = await getConfig();
    expect(config.contentUrl_guonei).toBe("https://cn.example");
    expect(config.usdtCheckTime).toBe(45);
    expect(config.inviteRule).toBe("邀请好友返利");
    expect(await storedValue("contentUrl_guonei")).toBe("https://cn.example");
  });

  test("wrong types, out-of-range values and unknown keys are 1000 and change nothing", async () => {
    await admin.call("/api/admin/config/set_config", { notice_title: "keep me", smtp_port: 587 });
    const bad: Record<string, unknown>[] = [
      { smtp_port: "25" },
      { smtp_port: 70_000 },
      { smtp_port: null },
      { notice_show: "yes" },
      { notice_show: 1 },
      { admin_id: "abc" },
      { channelRewardRate: 0.9 },
      { notice_title: 42 },
      { notice_title: "x".repeat(5000) },
      { no_such_setting: 1 },
      { notice_title: "changed", no_such_setting: 1 },
      { notice_title: "changed", smtp_port: "25" },
    ];
    for (const patch of bad) {
      const answer = await admin.call("/api/admin/config/set_config", patch);
      expect({ patch, code: answer.code }).toEqual({ patch, code: 1000 });
      expect(answer.msg.length).toBeGreaterThan(0);
    }
    const config = await getConfig();
    expect(config.notice_title).toBe("keep me");
    expect(config.smtp_port).toBe(587);
    expect(config.admin_id).toEqual([]);
  });

  test("an invalid timezone is refused with 1000 and a clear message, and nothing of the call is saved", async () => {
    await admin.call("/api/admin/config/set_config", { timezone: "Asia/Shanghai", notice_title: "keep me" });
    for (const timezone of ["Mars/Olympus", "Asia/Shanghai ", "", "GMT+25", "../../etc/passwd"]) {
      const answer = await admin.call("/api/admin/config/set_config", { timezone, notice_title: "changed" });
      expect({ timezone, code: answer.code }).toEqual({ timezone, code: 1000 });
      expect(answer.msg).toContain("timezone");
      expect(answer.msg).toContain("时区无效");
    }
    expect(await storedValue("timezone")).toBe("Asia/Shanghai");
    expect((await getConfig()).notice_title).toBe("keep me");
    // Real zones are saved.
    for (const timezone of ["Europe/Berlin", "UTC", "Asia/Shanghai"]) {
      expect((await admin.call("/api/admin/config/set_config", { timezone })).code).toBe(0);
      expect(await storedValue("timezone")).toBe(timezone);
    }
  });

  test("callback bases and the addresses the panel calls must be http(s) addresses", async () => {
    for (const patch of [
      { notify_url: "javascript:alert(1)" },
      { epay_url: "file:///etc/passwd" },
      { trongrid_url: "gopher://api.trongrid.io" },
      { panel_url: "javascript:alert(1)" },
      { notify_url: "panel.example.com" },
      { return_url: "https://panel.example.com/?next=evil" },
      { return_url: "https://user:pw@panel.example.com" },
    ]) {
      expect({ patch, code: (await admin.call("/api/admin/config/set_config", patch)).code }).toEqual({
        patch,
        code: 1000,
      });
    }
    const saved = await admin.call<Settings>("/api/admin/config/set_config", {
      notify_url: "https://callback.example.com/",
      return_url: "",
    });
    expect(saved.code).toBe(0);
    expect(saved.data.notify_url).toBe("https://callback.example.com/");
    await admin.call("/api/admin/config/set_config", { notify_url: "" });
  });

  test("the announcement's group link is relative or http(s), like every link the panel shows (issue 26, C10)", async () => {
    for (const group_link of [
      "javascript:alert(document.cookie)",
      "JavaScript:alert(1)",
      " java\tscript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "vbscript:msgbox(1)",
      "file:///etc/passwd",
    ]) {
      const answer = await admin.call("/api/admin/config/set_config", { group_link });
      expect({ group_link, code: answer.code, msg: answer.msg }).toEqual({
        group_link,
        code: 1000,
        msg: "参数错误 group_link: 群组链接须为 http(s):// 开头的链接或站内链接",
      });
    }
    for (const group_link of ["https://t.me/ferry_group", "http://qm.qq.com/q/abc", "#/feedback", ""]) {
      expect((await admin.call("/api/admin/config/set_config", { group_link })).code).toBe(0);
      expect(await storedValue("group_link")).toBe(group_link);
    }
    // One already in the database (an older version, a hand edit) is never handed out.
    await server.context.db.run(
      "UPDATE settings SET value = ? WHERE key = 'group_link'",
      JSON.stringify("javascript:alert(1)"),
    );
    await server.context.settings.update({});
    const host = await new ApiClient(server.url).call<HostInfo>("/api/host/get");
    expect(host.data.group_link).toBe("");
    expect((await admin.call<Settings>("/api/admin/config/get")).data.group_link).toBe("");
  });

  test("the SMTP password is never shown: masked in get and set answers; saving the mask keeps it", async () => {
    const secret = "Sm7p-Secret-Value";
    expect((await getConfig()).smtp_password).toBe("");

    const set = await rawCall(admin, "/api/admin/config/set_config", { smtp_password: secret });
    expect(set.answer.code).toBe(0);
    expect(set.answer.data.smtp_password).toBe("********");
    expect(set.decoded).not.toContain(secret);
    expect(await storedValue("smtp_password")).toBe(secret);

    const got = await rawCall(admin, "/api/admin/config/get", {});
    expect(got.answer.data.smtp_password).toBe("********");
    expect(got.decoded).not.toContain(secret);
    expect(got.raw).not.toContain(Buffer.from(secret).toString("base64").slice(0, 12));

    // The admin form sends the mask back when the password was not touched.
    const resend = await rawCall(admin, "/api/admin/config/set_config", {
      ...got.answer.data,
      notice_content: "edited",
    });
    expect(resend.answer.code).toBe(0);
    expect(await storedValue("smtp_password")).toBe(secret);
    expect(await server.context.settings.get("smtp_password")).toBe(secret);
    expect(resend.answer.data.notice_content).toBe("edited");

    // A new value replaces it; an empty value clears it.
    await admin.call("/api/admin/config/set_config", { smtp_password: "second-secret" });
    expect(await storedValue("smtp_password")).toBe("second-secret");
    await admin.call("/api/admin/config/set_config", { smtp_password: "" });
    expect((await getConfig()).smtp_password).toBe("");
  });

  test("settings written through the SettingsStore show in the API at once", async () => {
    await server.context.settings.update({ notice_title: "from the store" });
    expect((await new ApiClient(server.url).call<HostInfo>("/api/host/get")).data.notice.notice_title).toBe(
      "from the store",
    );
  });
});

test("settings survive a restart of the server", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-settings-"));
  try {
    const first = await startServer({ dataDir, port: 0 });
    await createUser(first.context, {
      email: "boss@example.com",
      passwordDigest: transformPassword("correct-horse-1"),
      type: "admin",
    });
    const boss = new ApiClient(first.url);
    expect((await boss.login("boss@example.com", "correct-horse-1")).code).toBe(0);
    expect(
      (await boss.call("/api/admin/config/set_config", { notice_title: "持久", smtp_port: 2525 })).code,
    ).toBe(0);
    await first.stop();

    const second = await startServer({ dataDir, port: 0 });
    try {
      const again = new ApiClient(second.url);
      expect((await again.login("boss@example.com", "correct-horse-1")).code).toBe(0);
      const config = await again.call<Settings>("/api/admin/config/get");
      expect(config.data.notice_title).toBe("持久");
      expect(config.data.smtp_port).toBe(2525);
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a read inside a transaction older than an update does not keep the old settings cached", async () => {
  const { db, settings } = server.context;
  await settings.update({ contact_info: "before" });
  // A second store on the same database, with nothing cached yet: the one a replica, or a job
  // holding an older transaction, would read through.
  const reader = new SettingsStore(db);
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started = () => {};
  const inTransaction = new Promise<void>((resolve) => {
    started = resolve;
  });
  let readInside = "";
  const older = tx(db, async () => {
    // The transaction's first read fixes its snapshot (PostgreSQL) or takes the writer (SQLite).
    await db.get("SELECT COUNT(*) AS n FROM settings");
    started();
    await held;
    readInside = (await reader.all()).contact_info;
  });
  await inTransaction;
  const updated = settings.update({ contact_info: "after" });
  // PostgreSQL: the update commits while the older transaction is open; SQLite: it waits for it.
  if (db.engine === "postgres") await updated;
  release();
  await older;
  await updated;
  expect(readInside).toBe("before");
  expect((await reader.all()).contact_info).toBe("after");
});

test("maskSettingValue: secret settings and each webhook's secret are masked, the rest shown as it is (issue 30)", () => {
  expect(maskSettingValue("epay_key", "k-123")).toBe(SECRET_MASK);
  expect(maskSettingValue("epay_key", "")).toBe("");
  expect(maskSettingValue("epay_url", "https://pay.example.com")).toBe("https://pay.example.com");
  const webhook = {
    id: "w1",
    url: "https://hooks.example.com/a",
    secret: "whsec-1234567",
    events: ["order.paid" as const],
  };
  expect(maskSettingValue("webhooks", [webhook])).toEqual([{ ...webhook, secret: SECRET_MASK }]);
  expect(webhook.secret).toBe("whsec-1234567");
});
