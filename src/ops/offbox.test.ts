/**
 * Issue 30 §4: off-box copies of the scheduled backups, against a real S3-compatible server on
 * loopback (s3rver, tests/fakes/s3.ts) and the fake Bot API. The day's backup is sealed, uploaded,
 * read back and verified, the copies under the prefix pruned to the keep count, the same file sent
 * to the bound admins' chats; encrypted copies open with the passphrase only; S3 down is an
 * error-log row and an admin alert. Both engines (the backup is a pg_dump archive on PostgreSQL).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  FAKE_S3_BUCKET,
  FAKE_S3_KEY_ID,
  FAKE_S3_SECRET,
  type FakeS3,
  startFakeS3,
} from "../../tests/fakes/s3.ts";
import {
  bindChat,
  FAKE_BOT_TOKEN,
  type FakeTelegram,
  outboxTexts,
  startFakeTelegram,
} from "../../tests/fakes/telegram.ts";
import { loggedInClient, startTestServer, type TestServer } from "../../tests/harness.ts";
import { backupsDir, runScheduledBackup, scheduledBackupName } from "./backup.ts";
import { openSealedBackup, SealedBackupError, sealedHeaderOf } from "./sealed.ts";

let server: TestServer;
let s3: FakeS3;
let telegram: FakeTelegram;
const work = mkdtempSync(join(tmpdir(), "ferry-offbox-test-"));
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** 2026-03-01 00:00 in Asia/Shanghai (UTC+8). */
const MIDNIGHT = Date.UTC(2026, 1, 28, 16);
const ADMIN_CHAT = 730_001;

beforeAll(async () => {
  s3 = await startFakeS3();
  telegram = startFakeTelegram();
  server = await startTestServer();
  const { user } = await loggedInClient(server, { role: "admin", email: "offbox-admin@example.com" });
  telegram.userSays({ id: ADMIN_CHAT, first_name: "Admin" }, "/start");
  await bindChat(server, user.id, ADMIN_CHAT);
  await server.context.settings.update({
    backup_hour: 3,
    backup_keep: 2,
    timezone: "Asia/Shanghai",
    backup_s3_endpoint: s3.endpoint,
    backup_s3_bucket: FAKE_S3_BUCKET,
    backup_s3_access_key_id: FAKE_S3_KEY_ID,
    backup_s3_secret_access_key: FAKE_S3_SECRET,
    backup_s3_prefix: "nightly/",
    backup_offbox_keep: 2,
  });
});
afterAll(async () => {
  await server?.close();
  await s3?.close();
  await telegram?.close();
  rmSync(work, { recursive: true, force: true });
});

const adminId = async () =>
  (
    await server.context.db.get<{ id: string }>(
      "SELECT id FROM users WHERE email = ?",
      "offbox-admin@example.com",
    )
  )?.id;
const engine = () => server.context.db.engine;
const objectName = (day: string) => `${scheduledBackupName(day, engine())}.ferrybak`;
const at = (dayOffset: number) => MIDNIGHT + dayOffset * DAY + 3 * HOUR;
const runDay = async (dayOffset: number) =>
  (await runScheduledBackup(server.context, server.dataDir, at(dayOffset))) as string;

/** The stored object, downloaded into the work folder. */
async function download(key: string): Promise<string> {
  const file = join(work, `${key.replaceAll("/", "_")}-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, new Uint8Array(await s3.client.file(key).arrayBuffer()));
  return file;
}

/** Opens an off-box file and answers the backup inside, as bytes. */
async function opened(file: string, passphrase = ""): Promise<Buffer> {
  const out = `${file}.opened`;
  await openSealedBackup(file, out, passphrase);
  const bytes = Buffer.from(await Bun.file(out).arrayBuffer());
  rmSync(out);
  return bytes;
}

test("the day's backup is uploaded, verified, pruned to the keep count, and equals the local one", async () => {
  const first = await runDay(0);
  expect(await s3.keys("nightly/")).toEqual([`nightly/${objectName("2026-03-01")}`]);
  const object = await download(`nightly/${objectName("2026-03-01")}`);
  const header = sealedHeaderOf(object);
  expect(header).toMatchObject({
    engine: engine(),
    name: scheduledBackupName("2026-03-01", engine()),
    enc: null,
  });
  // What comes out of the object is the local backup, byte for byte.
  expect((await opened(object)).equals(Buffer.from(await Bun.file(first).arrayBuffer()))).toBe(true);
  // The sealed file written for the upload does not stay behind.
  expect(readdirSync(backupsDir(server.dataDir)).filter((name) => name.endsWith(".ferrybak"))).toEqual([]);

  // Something else under the prefix (a `ferry backup --to s3` copy) is never pruned.
  await s3.client.write("nightly/ferry-2026-02-01T10-00-00Z.db.ferrybak", "kept by hand");
  await runDay(1);
  await runDay(2);
  expect(await s3.keys("nightly/")).toEqual([
    "nightly/ferry-2026-02-01T10-00-00Z.db.ferrybak",
    `nightly/${objectName("2026-03-02")}`,
    `nightly/${objectName("2026-03-03")}`,
  ]);
  // The day's upload happens once: a second round of the same day has nothing to do.
  expect(await runScheduledBackup(server.context, server.dataDir, at(2) + HOUR)).toBeNull();
  // Every request was signed as the store checks it (SigV4).
  expect(s3.refused).toEqual([]);
}, 60_000);

test("with backup_telegram on, the bound admins' chats get the file itself", async () => {
  await server.context.settings.update({
    backup_telegram: true,
    telegram_api_base: telegram.url,
    telegram_bot_token: FAKE_BOT_TOKEN,
  });
  await runDay(3);
  const sent = telegram.documents.filter((document) => document.chat_id === ADMIN_CHAT);
  expect(sent.map((document) => [document.fileName, document.caption])).toEqual([
    [objectName("2026-03-04"), "飞渡定时备份 2026-03-04"],
  ]);
  const inStore = new Uint8Array(await s3.client.file(`nightly/${objectName("2026-03-04")}`).arrayBuffer());
  expect(Buffer.from(sent[0]?.bytes ?? []).equals(Buffer.from(inStore))).toBe(true);

  // No admin has bound the bot: nobody gets the file, and the error log says so.
  await server.context.db.run("DELETE FROM telegram_bindings WHERE chat_id = ?", ADMIN_CHAT);
  try {
    await runDay(12);
  } finally {
    await bindChat(server, (await adminId()) as string, ADMIN_CHAT);
  }
  expect(telegram.documents).toHaveLength(1);
  expect(
    await server.context.db.all<{ msg: string }>(
      "SELECT msg FROM error_logs WHERE name = ?",
      "off-box backup (Telegram)",
    ),
  ).toEqual([
    { msg: "no admin account has bound the bot (我的账户 → Telegram), so no chat was sent the file" },
  ]);
  await server.context.settings.update({ backup_telegram: false });
}, 60_000);

test("with a passphrase the copy is encrypted: it opens with the passphrase and refuses a wrong one", async () => {
  await server.context.settings.update({ backup_passphrase: "correct horse battery staple" });
  const local = await runDay(4);
  const object = await download(`nightly/${objectName("2026-03-05")}`);
  expect(sealedHeaderOf(object).enc).toMatchObject({
    alg: "aes-256-gcm",
    kdf: "scrypt",
    N: 32_768,
    r: 8,
    p: 1,
  });
  // Nothing of the database is readable in the object.
  const raw = await Bun.file(object).arrayBuffer();
  const plainMark = engine() === "sqlite" ? "SQLite format 3" : "PGDMP";
  expect(Buffer.from(raw).includes(Buffer.from(plainMark))).toBe(false);
  expect(Buffer.from(raw).includes(Buffer.from("offbox-admin@example.com"))).toBe(false);

  expect(
    (await opened(object, "correct horse battery staple")).equals(
      Buffer.from(await Bun.file(local).arrayBuffer()),
    ),
  ).toBe(true);
  await expect(opened(object, "wrong horse")).rejects.toThrow(
    new SealedBackupError(`wrong passphrase for ${object}`),
  );
  await expect(opened(object)).rejects.toThrow(/is encrypted: give the passphrase/);
  expect(existsSync(`${object}.opened`)).toBe(false);
  await server.context.settings.update({ backup_passphrase: "" });
}, 60_000);

test("S3 down: the local backup is kept, an error-log row and an alert to the admins", async () => {
  await s3.stop();
  try {
    const local = await runDay(5);
    expect(existsSync(local)).toBe(true);
  } finally {
    await s3.restart();
  }
  const logged = await server.context.db.all<{ name: string; msg: string }>(
    "SELECT name, msg FROM error_logs WHERE name = ?",
    "off-box backup (S3)",
  );
  expect(logged).toHaveLength(1);
  expect(await outboxTexts(server, ADMIN_CHAT)).toContainEqual(
    expect.stringContaining("⚠️ 2026-03-06 的定时备份未能送到 S3："),
  );
  // The store still holds the last good copies; the day after, uploads go on.
  await runDay(6);
  expect(await s3.keys(`nightly/${objectName("2026-03-07")}`)).toEqual([
    `nightly/${objectName("2026-03-07")}`,
  ]);
}, 60_000);

test("a lease lost during the upload stops it and gives the day back; the next holder sends the day", async () => {
  // A store that takes requests and never answers: the upload hangs until the lease is lost.
  const held = new Set<() => void>();
  const stuck = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () =>
      new Promise<Response>((resolve) => held.add(() => resolve(new Response("", { status: 503 })))),
  });
  await server.context.settings.update({ backup_s3_endpoint: `http://127.0.0.1:${stuck.port}` });
  const lease = new AbortController();
  const writer = { id: "replica-losing", host: "box-a" };
  try {
    const round = runScheduledBackup(server.context, server.dataDir, at(7), writer, lease.signal);
    while (held.size === 0) await Bun.sleep(20);
    lease.abort(new DOMException("lease lost", "AbortError"));
    await expect(round).rejects.toThrow("lease lost");
  } finally {
    for (const release of held) release();
    await stuck.stop(true);
    await server.context.settings.update({ backup_s3_endpoint: s3.endpoint });
  }
  expect(
    await server.context.db.all("SELECT day FROM scheduled_backups WHERE day = ?", "2026-03-08"),
  ).toEqual([]);
  expect(await s3.keys(`nightly/${objectName("2026-03-08")}`)).toEqual([]);

  // The replica that takes the job over, with a data folder of its own, does the day.
  const otherData = join(work, "replica-b");
  const file = await runScheduledBackup(server.context, otherData, at(7) + HOUR, {
    id: "replica-b",
    host: "box-b",
  });
  expect(file).toBe(join(backupsDir(otherData), scheduledBackupName("2026-03-08", engine())));
  expect(await s3.keys(`nightly/${objectName("2026-03-08")}`)).toEqual([
    `nightly/${objectName("2026-03-08")}`,
  ]);
}, 60_000);

test("a wrong secret access key: the store refuses the signature; an error-log row and an alert", async () => {
  await server.context.settings.update({ backup_s3_secret_access_key: "not-the-secret" });
  try {
    await runDay(8);
  } finally {
    await server.context.settings.update({ backup_s3_secret_access_key: FAKE_S3_SECRET });
  }
  expect(s3.refused.length).toBeGreaterThan(0);
  expect(s3.refused.every((line) => line.startsWith("SignatureDoesNotMatch "))).toBe(true);
  expect(await s3.keys(`nightly/${objectName("2026-03-09")}`)).toEqual([]);
  const logged = await server.context.db.all<{ msg: string }>(
    "SELECT msg FROM error_logs WHERE name = ? ORDER BY create_time",
    "off-box backup (S3)",
  );
  expect(logged).toHaveLength(2);
  expect(await outboxTexts(server, ADMIN_CHAT)).toContainEqual(
    expect.stringContaining("⚠️ 2026-03-09 的定时备份未能送到 S3："),
  );
  s3.refused.length = 0;
}, 60_000);

test("a backup of several MiB goes up in parts, encrypted chunk by chunk, and comes back whole", async () => {
  // 16 rows of 1 MB of random hex: incompressible enough that pg_dump's archive stays over 5 MiB too.
  for (let i = 0; i < 16; i++) {
    await server.context.db.run(
      `INSERT INTO error_logs (create_time, last_time, name, msg, stack, fingerprint, repeat_count)
         VALUES (0, 0, 'filler', 'filler', ?, ?, 1)`,
      randomBytes(512 * 1024).toString("hex"),
      `filler-${i}`,
    );
  }
  await server.context.settings.update({ backup_passphrase: "big one" });
  try {
    const local = await runDay(9);
    const key = `nightly/${objectName("2026-03-10")}`;
    // A multipart upload: started, parts of 5 MiB, completed (each request's signature checked).
    const uploads = s3.requests.filter((line) => line.includes(`/${FAKE_S3_BUCKET}/${key}?`));
    expect(uploads[0]).toBe(`POST /${FAKE_S3_BUCKET}/${key}?uploads=`);
    expect(uploads.filter((line) => line.includes("x-id=UploadPart")).length).toBeGreaterThanOrEqual(2);
    expect(uploads.at(-1)).toStartWith(`POST /${FAKE_S3_BUCKET}/${key}?uploadId=`);
    const object = await download(key);
    expect((await opened(object, "big one")).equals(Buffer.from(await Bun.file(local).arrayBuffer()))).toBe(
      true,
    );
    expect(s3.refused).toEqual([]);
  } finally {
    await server.context.settings.update({ backup_passphrase: "" });
    await server.context.db.run("DELETE FROM error_logs WHERE name = 'filler'");
  }
}, 120_000);

test("without --allow-private-urls a store on this machine is never called: error row and alert say why", async () => {
  server.context.allowPrivateUrls = false;
  const before = s3.requests.length;
  try {
    await runDay(10);
  } finally {
    server.context.allowPrivateUrls = true;
  }
  expect(s3.requests.length).toBe(before);
  const last = await server.context.db.get<{ msg: string }>(
    "SELECT msg FROM error_logs WHERE name = ? ORDER BY last_time DESC",
    "off-box backup (S3)",
  );
  expect(last?.msg).toStartWith("拒绝连接 127.0.0.1（127.0.0.1，本机地址）");
  expect(await outboxTexts(server, ADMIN_CHAT)).toContainEqual(
    expect.stringContaining("⚠️ 2026-03-11 的定时备份未能送到 S3：拒绝连接 127.0.0.1"),
  );
}, 60_000);

test("a store that keeps other bytes than were sent fails the read-back check; the bad copy is deleted", async () => {
  s3.corruptWrites = true;
  try {
    await runDay(11);
  } finally {
    s3.corruptWrites = false;
  }
  const key = `nightly/${objectName("2026-03-12")}`;
  const last = await server.context.db.get<{ msg: string }>(
    "SELECT msg FROM error_logs WHERE name = ? ORDER BY last_time DESC",
    "off-box backup (S3)",
  );
  expect(last?.msg).toMatch(
    new RegExp(
      `^verification of ${key.replaceAll(".", "\\.")} failed: SHA-256 read back [0-9a-f]{64}, sent [0-9a-f]{64}; the object deleted$`,
    ),
  );
  expect(await s3.keys(key)).toEqual([]);
  expect(await outboxTexts(server, ADMIN_CHAT)).toContainEqual(
    expect.stringContaining("⚠️ 2026-03-12 的定时备份未能送到 S3：verification of"),
  );
}, 60_000);
