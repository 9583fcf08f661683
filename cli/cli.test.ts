/** The operator CLI, run as a real process (`bun src/main.ts …`) against temp data directories. */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { openSqlite } from "../src/db/db.ts";
import { migrate } from "../src/db/migrate.ts";
import { migrations } from "../src/embedded.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import { startServer } from "../src/server.ts";
import { ApiClient } from "../tests/harness.ts";
import { expectHelp, expectOneLineError, expectRefused, ferry } from "./test-helpers.ts";

const ROOT = join(import.meta.dir, "..");
const root = mkdtempSync(join(tmpdir(), "ferry-cli-"));
let counter = 0;

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function freshDir(): string {
  counter += 1;
  return join(root, `d${counter}`);
}

test("--version prints the package version", async () => {
  for (const flag of ["--version", "-v"]) {
    const run = await ferry([flag]);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(pkg.version);
  }
});

test("every command has --help", async () => {
  const commands: [string[], string[]][] = [
    [[], ["serve", "user", "migrate", "backup"]],
    [["serve"], ["--host", "--port", "--data"]],
    [["user"], ["create", "set-role", "set-password"]],
    [
      ["user", "create"],
      ["--email", "stdin", "never from the command line", "--role", "--data", "--json"],
    ],
    [
      ["user", "set-password"],
      ["<email>", "stdin", "--data"],
    ],
    [
      ["user", "set-role"],
      ["<email>", "<role>", "--data", "--json"],
    ],
    [["migrate"], ["status"]],
    [
      ["migrate", "status"],
      ["--data", "--json"],
    ],
    [["backup"], ["[file]", "--data", "--to"]],
  ];
  await expectHelp(commands);
});

describe("user create, user set-role, migrate status", () => {
  const dataDir = freshDir();

  test("migrate status on a new data directory lists every migration as pending", async () => {
    const run = await ferry(["migrate", "status", "--data", dataDir, "--json"]);
    expect(run.code).toBe(0);
    const states = JSON.parse(run.stdout) as { version: number; name: string; appliedTime: number | null }[];
    expect(states.map((s) => s.version)).toEqual(migrations.map((m) => m.version));
    expect(states.every((s) => s.appliedTime === null)).toBe(true);
    const text = await ferry(["migrate", "status", "--data", dataDir]);
    expect(text.stdout).toContain("001_foundation");
    expect(text.stdout).toContain("pending");
  });

  test("user create makes an account that logs in through the API, with the role asked for", async () => {
    const run = await ferry(
      ["user", "create", "--email", "Boss@Example.COM", "--role", "admin", "--data", dataDir, "--json"],
      {},
      "long-password-1\n",
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const created = JSON.parse(run.stdout) as { _id: string; email: string; type: string };
    expect(created._id).toMatch(/^[0-9a-f]{24}$/);
    expect(created.email).toBe("boss@example.com");
    expect(created.type).toBe("admin");

    const plain = await ferry(
      ["user", "create", "--email", "staff@example.com", "--data", dataDir],
      {},
      "long-password-2\n",
    );
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("staff@example.com");
    expect(plain.stdout).toContain("normal");

    const status = await ferry(["migrate", "status", "--data", dataDir, "--json"]);
    const states = JSON.parse(status.stdout) as { appliedTime: number | null }[];
    expect(states.every((s) => typeof s.appliedTime === "number")).toBe(true);

    const server = await startServer({ dataDir, port: 0 });
    try {
      const boss = new ApiClient(server.url);
      expect((await boss.login("boss@example.com", "long-password-1")).code).toBe(0);
      expect((await boss.call("/api/admin/config/get")).code).toBe(0);
      const verified = await server.context.db.get<{ email_verified: number }>(
        "SELECT email_verified FROM users WHERE email = ?",
        "boss@example.com",
      );
      expect(verified?.email_verified).toBe(1);

      // set-role while the server runs takes effect on the next call.
      const staff = new ApiClient(server.url);
      expect((await staff.login("staff@example.com", "long-password-2")).code).toBe(0);
      expect((await staff.call("/api/admin/config/get")).code).toBe(1003);
      const promote = await ferry([
        "user",
        "set-role",
        "STAFF@example.com",
        "admin",
        "--data",
        dataDir,
        "--json",
      ]);
      expect(promote.code).toBe(0);
      expect(JSON.parse(promote.stdout)).toMatchObject({ email: "staff@example.com", type: "admin" });
      expect((await staff.call("/api/admin/config/get")).code).toBe(0);
      const demote = await ferry(["user", "set-role", "staff@example.com", "channel", "--data", dataDir]);
      expect(demote.code).toBe(0);
      expect(demote.stdout).toContain("channel");
      expect((await staff.call("/api/admin/config/get")).code).toBe(1003);
      expect((await staff.call<{ type: string }>("/api/user/userinfo")).data.type).toBe("channel");
    } finally {
      await server.stop();
    }
  });

  test("FERRY_DATA picks the data directory when --data is not given", async () => {
    const envDir = freshDir();
    const run = await ferry(
      ["user", "create", "--email", "env@example.com"],
      { FERRY_DATA: envDir },
      "long-password-1\n",
    );
    expect(run.code).toBe(0);
    const db = new Database(join(envDir, "ferry.db"), { readonly: true });
    expect(db.query("SELECT email FROM users").all()).toEqual([{ email: "env@example.com" }]);
    db.close();
  });
});

describe("backup", () => {
  test("copies the live database while the server runs; the copy opens and holds the new user", async () => {
    const dataDir = freshDir();
    const server = await startServer({ dataDir, port: 0 });
    const copy = join(root, `backup-${counter}.db`);
    try {
      const client = new ApiClient(server.url);
      const signup = await client.call("/api/user/signup", {
        email: "fresh@example.com",
        password: transformPassword("long-password-1"),
      });
      expect(signup.code).toBe(0);

      const run = await ferry(["backup", copy, "--data", dataDir]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(copy);
      // It holds the EPay key and password hashes: readable by its owner only (issue 11, finding 14).
      expect(statSync(copy).mode & 0o777).toBe(0o600);

      // The server is unaffected.
      expect((await client.call("/api/user/userinfo")).code).toBe(0);
    } finally {
      await server.stop();
    }
    const db = new Database(copy, { readonly: true });
    try {
      expect(db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check).toBe(
        "ok",
      );
      expect(db.query("SELECT email FROM users").all()).toEqual([{ email: "fresh@example.com" }]);
      const versions = db
        .query<{ version: number }, []>("SELECT version FROM schema_migrations ORDER BY version")
        .all();
      expect(versions.map((v) => v.version)).toEqual(migrations.map((m) => m.version));
    } finally {
      db.close();
    }

    // A second backup to the same file is refused and leaves the first intact.
    const size = statSync(copy).size;
    expectOneLineError(await ferry(["backup", copy, "--data", dataDir]), /overwrite/);
    expect(statSync(copy).size).toBe(size);
  });

  test("a data directory without a database is an error, not an empty backup", async () => {
    const dataDir = freshDir();
    const copy = join(root, `empty-${counter}.db`);
    expectOneLineError(await ferry(["backup", copy, "--data", dataDir]), /no database/);
    expect(existsSync(copy)).toBe(false);
    expect(existsSync(join(dataDir, "ferry.db"))).toBe(false);
  });
});

describe("bad input: non-zero exit and a one-line error", () => {
  test("for every command", async () => {
    const dataDir = freshDir();
    const seed = await ferry(
      ["user", "create", "--email", "taken@example.com", "--data", dataDir],
      {},
      "long-password-1\n",
    );
    expect(seed.code).toBe(0);
    const bad: [string[], RegExp, string?][] = [
      [["user", "create", "--email", "not-an-email", "--data", dataDir], /e-mail/, "long-password-1\n"],
      [["user", "create", "--email", "short@example.com", "--data", dataDir], /8/, "short\n"],
      [
        ["user", "create", "--email", "r@example.com", "--role", "king", "--data", dataDir],
        /role/,
        "long-password-1\n",
      ],
      [
        ["user", "create", "--email", "TAKEN@example.com", "--data", dataDir],
        /taken@example\.com/,
        "long-password-1\n",
      ],
      [["user", "create", "--email", "nopassword@example.com", "--data", dataDir], /no password on stdin/],
      // The password is never taken from argv, where ps shows it to every user of the machine.
      [
        ["user", "create", "--email", "argv@example.com", "--password", "long-password-1", "--data", dataDir],
        /--password is not taken .*stdin/,
      ],
      [["user", "create", "--data", dataDir], /--email/, "long-password-1\n"],
      [["user", "create", "--email", "x@example.com", "--bogus"], /--bogus/, "long-password-1\n"],
      [["user", "set-role", "nobody@example.com", "admin", "--data", dataDir], /nobody@example\.com/],
      [["user", "set-role", "taken@example.com", "king", "--data", dataDir], /role/],
      [["user", "set-role", "taken@example.com"], /role/],
      [["serve", "--port", "abc", "--data", dataDir], /port/],
      [["serve", "--port", "70000", "--data", dataDir], /port/],
      [["migrate", "status", "--data"], /--data/],
      [["frobnicate"], /frobnicate/],
      [["backup"], /file/],
    ];
    await expectRefused(bad);
    // Nothing was created by the refused commands.
    const db = new Database(join(dataDir, "ferry.db"), { readonly: true });
    expect(db.query("SELECT email, type FROM users").all()).toEqual([
      { email: "taken@example.com", type: "normal" },
    ]);
    db.close();
  });

  test("a database newer than this build: serve and user create refuse with one line naming the problem", async () => {
    const dataDir = freshDir();
    const db = openSqlite(join(dataDir, "ferry.db"));
    await migrate(db, migrations);
    await db.run(
      "INSERT INTO schema_migrations (version, name, applied_time) VALUES (?, 'future', 1)",
      (migrations.at(-1)?.version ?? 0) + 1,
    );
    await db.close();
    const [serve, create] = await Promise.all([
      ferry(["serve", "--host", "127.0.0.1", "--port", "0", "--data", dataDir]),
      ferry(["user", "create", "--email", "late@example.com", "--data", dataDir], {}, "long-password-1\n"),
    ]);
    expectOneLineError(serve, /newer/);
    expectOneLineError(create, /newer/);
  });
});

test("serve listens, answers /healthz and stops cleanly on SIGTERM", async () => {
  const dataDir = freshDir();
  const proc = Bun.spawn(
    [process.execPath, "src/main.ts", "serve", "--host", "127.0.0.1", "--port", "0", "--data", dataDir],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
  );
  try {
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let out = "";
    const deadline = Date.now() + 10_000;
    while (!/:(\d+),/.test(out) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    const port = /127\.0\.0\.1:(\d+),/.exec(out)?.[1];
    expect(port).toBeDefined();
    expect(out).toContain(dataDir);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  } finally {
    if (proc.exitCode === null) proc.kill("SIGKILL");
  }
});

describe("passwords from the terminal or stdin, never from argv (issue 12)", () => {
  test("user create without --password takes the first line of stdin", async () => {
    const dataDir = freshDir();
    const args = ["user", "create", "--email", "piped@example.com", "--data", dataDir];
    const created = await ferry(args, {}, "piped-password-1\nnot this line\n");
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: "" });
    expect(created.stdout).toContain("created piped@example.com (normal)");

    // Nothing on stdin, a short password, a bad e-mail before any password is read: one line each.
    expectOneLineError(
      await ferry(["user", "create", "--email", "none@example.com", "--data", dataDir]),
      /stdin/,
    );
    expectOneLineError(
      await ferry(["user", "create", "--email", "empty@example.com", "--data", dataDir], {}, ""),
      /no password on stdin/,
    );
    expectOneLineError(
      await ferry(["user", "create", "--email", "short@example.com", "--data", dataDir], {}, "short\n"),
      /at least 8 characters/,
    );
    expectOneLineError(
      await ferry(["user", "create", "--email", "nope"], {}, "piped-password-1\n"),
      /e-mail/,
    );

    const server = await startServer({ dataDir, port: 0 });
    try {
      const client = new ApiClient(server.url);
      expect((await client.login("piped@example.com", "piped-password-1")).code).toBe(0);
      const emails = await server.context.db.all<{ email: string }>("SELECT email FROM users");
      expect(emails).toEqual([{ email: "piped@example.com" }]);
    } finally {
      await server.stop();
    }
  });

  test("user set-password: the new password works, the old one and every open session end", async () => {
    const dataDir = freshDir();
    const created = await ferry(
      ["user", "create", "--email", "forgot@example.com", "--data", dataDir],
      {},
      "old-password-1\n",
    );
    expect(created.code).toBe(0);
    const server = await startServer({ dataDir, port: 0 });
    try {
      const before = new ApiClient(server.url);
      expect((await before.login("forgot@example.com", "old-password-1")).code).toBe(0);
      expect((await before.call("/api/user/userinfo")).code).toBe(0);

      const set = await ferry(
        ["user", "set-password", "Forgot@Example.com", "--data", dataDir],
        {},
        "new-password-1\n",
      );
      expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: "" });
      expect(set.stdout).toContain("forgot@example.com");
      expect(set.stdout).toContain("signed out everywhere");

      // The browser logged in with the old password is signed out, as after a change by mail.
      expect((await before.call("/api/user/userinfo")).code).toBe(1002);
      expect((await new ApiClient(server.url).login("forgot@example.com", "old-password-1")).code).not.toBe(
        0,
      );
      expect((await new ApiClient(server.url).login("forgot@example.com", "new-password-1")).code).toBe(0);

      // Refused: an unknown account, a short password, no password, a password in argv. None changes it.
      expectOneLineError(
        await ferry(
          ["user", "set-password", "nobody@example.com", "--data", dataDir],
          {},
          "new-password-2\n",
        ),
        /no account with the e-mail nobody@example\.com/,
      );
      expectOneLineError(
        await ferry(["user", "set-password", "forgot@example.com", "--data", dataDir], {}, "short\n"),
        /at least 8 characters/,
      );
      expectOneLineError(
        await ferry(["user", "set-password", "forgot@example.com", "--data", dataDir]),
        /no password on stdin/,
      );
      expectOneLineError(
        await ferry([
          "user",
          "set-password",
          "forgot@example.com",
          "--password",
          "argv-password-1",
          "--data",
          dataDir,
        ]),
        /--password/,
      );
      expect((await new ApiClient(server.url).login("forgot@example.com", "new-password-1")).code).toBe(0);
    } finally {
      await server.stop();
    }
  });

  test("at a terminal the password is asked twice and not echoed; two different ones are refused", async () => {
    const dataDir = freshDir();
    // `script` gives the command a pseudo-terminal; each answer is typed once its prompt shows.
    const typeAt = async (args: string[], answers: string[]) => {
      const command = [process.execPath, "src/main.ts", ...args].join(" ");
      const proc = Bun.spawn(["script", "-qec", command, "/dev/null"], {
        cwd: ROOT,
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
      const guard = setTimeout(() => proc.kill("SIGKILL"), 20_000);
      const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let screen = "";
      for (const [i, answer] of answers.entries()) {
        while ((screen.match(/new password: |the same again: /g) ?? []).length <= i) {
          const { value, done } = await reader.read();
          if (done) break;
          screen += decoder.decode(value, { stream: true });
        }
        proc.stdin.write(`${answer}\r`);
        proc.stdin.flush();
      }
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        screen += decoder.decode(value, { stream: true });
      }
      const code = await proc.exited;
      clearTimeout(guard);
      return { code, screen };
    };

    const created = await typeAt(
      ["user", "create", "--email", "typed@example.com", "--data", dataDir],
      ["typed-password-1", "typed-password-1"],
    );
    expect(created.code).toBe(0);
    expect(created.screen).toContain("new password: ");
    expect(created.screen).toContain("the same again: ");
    expect(created.screen).toContain("created typed@example.com");
    expect(created.screen).not.toContain("typed-password-1");

    const differ = await typeAt(
      ["user", "set-password", "typed@example.com", "--data", dataDir],
      ["other-password-1", "other-password-2"],
    );
    expect(differ.code).toBe(1);
    expect(differ.screen).toContain("error: the two passwords differ");
    expect(differ.screen).not.toContain("other-password");

    const server = await startServer({ dataDir, port: 0 });
    try {
      expect((await new ApiClient(server.url).login("typed@example.com", "typed-password-1")).code).toBe(0);
    } finally {
      await server.stop();
    }
  });
});
