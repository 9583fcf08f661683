/**
 * Installing a node, against a real panel on 127.0.0.1: the agent download (token, SHA-256, 503
 * without an executable), the install script of every server type (parses under sh and bash,
 * the right service manager), and the one-line command from the back office run for real under
 * `sh` in dry-run mode: the agent is downloaded with curl and checked, the service and secrets
 * files are written under a temp root, and a wrong token, a tampered download, bad arguments and
 * the wrong CPU are refused with nothing installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ApiClient, startWithAdmin, type TestServer } from "../../../tests/harness.ts";
import { serveAgentBinary } from "../../../tests/nodes.ts";
import { agentInput, SERVER_TYPES, type ServerType } from "../node-record/schema.ts";
import { type AgentRow, findAgentRow, saveAgent } from "../node-record/service.ts";
import { NO_AGENT_BINARY } from "./install.ts";

/** The "agent" the panel serves in tests: runs anywhere, prints a version. */
const AGENT = "#!/bin/sh\necho 'ferry 0.1.0'\n";
const AGENT_SHA = new Bun.CryptoHasher("sha256").update(AGENT).digest("hex");

let server: TestServer;
let admin: ApiClient;
let dir: string;
let agentFile: string;
let restoreAgent: () => void;

beforeAll(async () => {
  ({ server, admin } = await startWithAdmin());
  ({ dir, file: agentFile, restore: restoreAgent } = serveAgentBinary("ferry-install-", AGENT, "agent"));
});
afterAll(async () => {
  restoreAgent?.();
  await server?.close();
});

let nodeCount = 0;
async function makeNode(serverType: ServerType): Promise<AgentRow> {
  nodeCount += 1;
  const agent = await saveAgent(
    server.context,
    agentInput.parse({
      name: `安装 ${nodeCount}`,
      type: serverType.endsWith("reality") ? "reality" : "v2ray",
      host: "www.example.com",
      ip: "203.0.113.30",
      ctrl_port: 888,
      zz_port: 443,
      port: 443,
      public_port: 443,
      serverType,
    }),
  );
  return (await findAgentRow(server.context, agent._id)) as AgentRow;
}

const query = (row: AgentRow, token = row.api_token) => `node_id=${row.node_no}&token=${token}`;

async function installCommand(row: AgentRow): Promise<string> {
  const answer = await admin.call<{ cmd: string }>("/api/admin/agents/manual_update_agent", {
    agentid: row.id,
  });
  expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
  return answer.data.cmd;
}

interface ShellRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function sh(script: string, env: Record<string, string> = {}, shell = "sh"): Promise<ShellRun> {
  const proc = Bun.spawn([shell, "-c", script], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

const freshRoot = () => mkdtempSync(join(dir, "root-"));
const modeOf = (path: string) => statSync(path).mode & 0o777;

describe("GET /node/ferry", () => {
  test("serves the agent with its SHA-256 to the node's own token only", async () => {
    const row = await makeNode("ubuntu_x86");
    const response = await fetch(`${server.url}/node/ferry?${query(row)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-sha256")).toBe(AGENT_SHA);
    expect(await response.text()).toBe(AGENT);
    const sum = await fetch(`${server.url}/node/ferry.sha256?${query(row)}`);
    expect(await sum.text()).toBe(`${AGENT_SHA}  ferry\n`);

    const other = await makeNode("ubuntu_x86");
    for (const path of ["/node/ferry", "/node/ferry.sha256"]) {
      const wrong = await fetch(`${server.url}${path}?${query(row, other.api_token)}`);
      expect({ path, status: wrong.status, body: await wrong.text() }).toEqual({
        path,
        status: 403,
        body: "token is error\n",
      });
      const missing = await fetch(`${server.url}${path}?node_id=${row.node_no}`);
      expect(missing.status).toBe(422);
    }
  });

  test("the new file is served and hashed after the executable changes", async () => {
    const row = await makeNode("ubuntu_x86");
    const file = join(dir, "agent-v2");
    writeFileSync(file, "#!/bin/sh\necho v2\n");
    process.env.FERRY_AGENT_BINARY = file;
    try {
      const first = await fetch(`${server.url}/node/ferry.sha256?${query(row)}`);
      writeFileSync(file, "#!/bin/sh\necho v3, longer\n");
      const second = await fetch(`${server.url}/node/ferry.sha256?${query(row)}`);
      const sha = (text: string) => `${new Bun.CryptoHasher("sha256").update(text).digest("hex")}  ferry\n`;
      expect([await first.text(), await second.text()]).toEqual([
        sha("#!/bin/sh\necho v2\n"),
        sha("#!/bin/sh\necho v3, longer\n"),
      ]);
    } finally {
      process.env.FERRY_AGENT_BINARY = agentFile;
    }
  });

  test("a panel running under bun without FERRY_AGENT_BINARY answers 503 and says why", async () => {
    const row = await makeNode("ubuntu_x86");
    delete process.env.FERRY_AGENT_BINARY;
    try {
      const response = await fetch(`${server.url}/node/ferry?${query(row)}`);
      expect({ status: response.status, body: await response.text() }).toEqual({
        status: 503,
        body: `${NO_AGENT_BINARY}\n`,
      });
      process.env.FERRY_AGENT_BINARY = join(dir, "no-such-file");
      expect((await fetch(`${server.url}/node/ferry.sha256?${query(row)}`)).status).toBe(503);
    } finally {
      process.env.FERRY_AGENT_BINARY = agentFile;
    }
  });
});

describe("GET /node/install.sh", () => {
  test("an unknown server type is 404 with the list of known ones", async () => {
    const response = await fetch(`${server.url}/node/install.sh?server_type=windows`);
    expect(response.status).toBe(404);
    expect(await response.text()).toBe(`unknown server_type "windows": one of ${SERVER_TYPES.join(", ")}\n`);
    expect((await fetch(`${server.url}/node/install.sh`)).status).toBe(404);
  });

  const SYSTEMD: ServerType[] = ["ubuntu_x86", "ubuntu_arm", "ubuntu_guonei", "ubuntu_reality"];
  for (const serverType of SERVER_TYPES) {
    test(`${serverType}: parses under sh and bash, and installs under ${SYSTEMD.includes(serverType) ? "systemd" : "OpenRC"}`, async () => {
      const response = await fetch(`${server.url}/node/install.sh?server_type=${serverType}`);
      expect(response.status).toBe(200);
      const script = await response.text();
      expect(script).not.toContain(AGENT_SHA); // nothing node-specific in a public script
      const file = join(dir, `install-${serverType}.sh`);
      writeFileSync(file, script);
      for (const shell of ["sh", "bash"]) {
        const check = await sh(`${shell} -n ${file}`);
        expect({ shell, ...check }).toEqual({ shell, code: 0, stdout: "", stderr: "" });
      }
      const help = await sh(`sh ${file} --help`);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("usage: sh install.sh --panel");

      if (SYSTEMD.includes(serverType)) {
        expect(script).toContain("Restart=always");
        expect(script).toContain("systemctl enable ferry-node");
        expect(script).toContain("apt-get install");
        expect(script).not.toContain("openrc-run");
      } else {
        expect(script).toContain("supervisor=supervise-daemon");
        expect(script).toContain("respawn_max=0");
        expect(script).toContain("rc-update add ferry-node default");
        expect(script).toContain("apk add");
        expect(script).not.toContain("systemctl");
      }
      expect(script.includes("apt-get install -y -q v2ray")).toBe(serverType === "ubuntu_guonei");
    });
  }
});

describe("the one-line command, run under sh in dry-run mode", () => {
  test("ubuntu_x86: downloads and checks the agent, writes the systemd unit and a private secrets file", async () => {
    const row = await makeNode("ubuntu_x86");
    const command = await installCommand(row);
    expect(command).toBe(
      `curl -fsSL '${server.url}/node/install.sh?server_type=ubuntu_x86' | sh -s -- ` +
        `--panel '${server.url}' --node-id ${row.node_no} --token ${row.api_token}`,
    );
    const root = freshRoot();
    const run = await sh(`${command} --dry-run`, { FERRY_INSTALL_ROOT: root });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });

    const ferry = join(root, "usr/local/bin/ferry");
    expect(readFileSync(ferry, "utf8")).toBe(AGENT);
    expect(modeOf(ferry)).toBe(0o755);
    expect(readFileSync(join(root, "etc/systemd/system/ferry-node.service"), "utf8")).toBe(
      [
        "[Unit]",
        "Description=Ferry node agent",
        "After=network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "EnvironmentFile=/etc/ferry-node.env",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: systemd's own ${VAR} expansion
        "ExecStart=/usr/local/bin/ferry node run --panel ${FERRY_PANEL} --node-id ${FERRY_NODE_ID} --token ${FERRY_TOKEN} --core ${FERRY_CORE} --data-dir /var/lib/ferry-node",
        "Restart=always",
        "RestartSec=3",
        "LimitNOFILE=1048576",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
      ].join("\n"),
    );
    const secrets = join(root, "etc/ferry-node.env");
    expect(readFileSync(secrets, "utf8")).toBe(
      `FERRY_PANEL='${server.url}'\nFERRY_NODE_ID='${row.node_no}'\nFERRY_TOKEN='${row.api_token}'\nFERRY_CORE='xray'\n`,
    );
    expect(modeOf(secrets)).toBe(0o600);
    expect(modeOf(join(root, "var/lib/ferry-node"))).toBe(0o700);

    // What it would do to the system, listed; the token never printed.
    for (const step of [
      "dry-run: apt-get update -q",
      "dry-run: env DEBIAN_FRONTEND=noninteractive apt-get install -y -q curl ca-certificates unzip",
      "dry-run: download https://github.com/XTLS/Xray-core/releases/latest/download/Xray-linux-64.zip",
      "dry-run: systemctl daemon-reload",
      "dry-run: systemctl enable ferry-node",
      "dry-run: systemctl restart ferry-node",
    ]) {
      expect(run.stdout).toContain(step);
    }
    expect(run.stdout).toContain(`installed /usr/local/bin/ferry (sha256 ${AGENT_SHA})`);
    expect(run.stdout).not.toContain(row.api_token);
  });

  test("alpine_reality: the OpenRC service, whose settings file gives the agent exactly its arguments", async () => {
    const row = await makeNode("alpine_reality");
    const root = freshRoot();
    const run = await sh(`${await installCommand(row)} --dry-run`, { FERRY_INSTALL_ROOT: root });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(run.stdout).toContain(
      "dry-run: apk add --no-cache curl ca-certificates unzip gcompat libstdc++ libgcc",
    );
    expect(run.stdout).toContain("dry-run: rc-update add ferry-node default");
    expect(run.stdout).toContain("dry-run: rc-service ferry-node restart");

    const init = join(root, "etc/init.d/ferry-node");
    const conf = join(root, "etc/conf.d/ferry-node");
    expect(readFileSync(init, "utf8").split("\n")[0]).toBe("#!/sbin/openrc-run");
    expect(modeOf(init)).toBe(0o755);
    expect(modeOf(conf)).toBe(0o600);
    // openrc-run reads conf.d, then the service script: the words supervise-daemon starts ferry with.
    const words = await sh(`. ${conf}; . ${init}; echo "$command"; printf '%s\\n' $command_args`);
    expect(words.stdout.trim().split("\n")).toEqual([
      "/usr/local/bin/ferry",
      "node",
      "run",
      "--panel",
      server.url,
      "--node-id",
      String(row.node_no),
      "--token",
      row.api_token,
      "--core",
      "xray",
      "--data-dir",
      "/var/lib/ferry-node",
    ]);
  });

  test("the settings panel_url and install_<type> change the command", async () => {
    const row = await makeNode("ubuntu_guonei");
    await server.context.settings.update({
      panel_url: "https://panel.example.com/",
      install_ubuntu_guonei: "https://mirror.example.cn/ferry/install.sh",
    });
    try {
      expect(await installCommand(row)).toBe(
        "curl -fsSL 'https://mirror.example.cn/ferry/install.sh' | sh -s -- " +
          `--panel 'https://panel.example.com' --node-id ${row.node_no} --token ${row.api_token}`,
      );
    } finally {
      await server.context.settings.update({ panel_url: "", install_ubuntu_guonei: "" });
    }
  });

  test("a wrong token installs nothing and says what to check", async () => {
    const row = await makeNode("ubuntu_x86");
    const other = await makeNode("ubuntu_x86");
    const root = freshRoot();
    const command = (await installCommand(row)).replace(row.api_token, other.api_token);
    const run = await sh(`${command} --dry-run`, { FERRY_INSTALL_ROOT: root });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      "ferry install: error: the panel refused the checksum request: check --panel, --node-id and --token",
    );
    expect(existsSync(join(root, "usr/local/bin/ferry"))).toBe(false);
    expect(existsSync(join(root, "etc"))).toBe(false);
  });

  test("a download that does not match the panel's SHA-256 is refused and nothing is installed", async () => {
    const row = await makeNode("ubuntu_x86");
    // Between the node and the panel: passes everything on, but flips the executable's last byte.
    const tamperer = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const url = new URL(request.url);
        const upstream = await fetch(`${server.url}${url.pathname}${url.search}`);
        if (url.pathname !== "/node/ferry") return upstream;
        const bytes = new Uint8Array(await upstream.arrayBuffer());
        bytes.set([(bytes.at(-1) ?? 0) ^ 1], bytes.length - 1);
        return new Response(bytes);
      },
    });
    try {
      const panel = `http://127.0.0.1:${tamperer.port}`;
      const root = freshRoot();
      const run = await sh(
        `curl -fsSL '${panel}/node/install.sh?server_type=ubuntu_x86' | sh -s -- --panel '${panel}' ` +
          `--node-id ${row.node_no} --token ${row.api_token} --dry-run`,
        { FERRY_INSTALL_ROOT: root },
      );
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(
        new RegExp(
          `the downloaded agent's SHA-256 is [0-9a-f]{64}, the panel says ${AGENT_SHA}: nothing installed`,
        ),
      );
      expect(existsSync(join(root, "usr/local/bin/ferry"))).toBe(false);
    } finally {
      await tamperer.stop(true);
    }
  });

  test("bad arguments are refused before anything is downloaded", async () => {
    const row = await makeNode("ubuntu_x86");
    const script = join(dir, "install-check.sh");
    writeFileSync(script, await (await fetch(`${server.url}/node/install.sh?server_type=ubuntu_x86`)).text());
    const ok = `--panel ${server.url} --node-id ${row.node_no} --token ${row.api_token}`;
    // Each would install under the temp root if it got through (--dry-run).
    const token = row.api_token;
    const cases: [args: string, error: string, env?: Record<string, string>][] = [
      [
        `--node-id 1 --token ${token}`,
        "--panel is required (the panel's URL, e.g. https://panel.example.com)",
      ],
      [`--panel ftp://x --node-id 1 --token ${token}`, "--panel must start with http:// or https://"],
      [
        `--panel "http://a'b" --node-id 1 --token ${token}`,
        "--panel holds characters a panel URL cannot have",
      ],
      [`--panel ${server.url} --node-id '1;x' --token ${token}`, "--node-id must be a number"],
      [`--panel ${server.url} --node-id 1`, "--token is required"],
      [`--panel ${server.url} --node-id 1 --token 'a$b'`, "--token must be letters and digits"],
      [`--panel ${server.url} --node-id 1 --token abc`, "--token is too short"],
      [`${ok} --force`, "unknown argument: --force"],
      [
        ok,
        "--dry-run needs FERRY_INSTALL_ROOT=<directory>; everything is written under it",
        { FERRY_INSTALL_ROOT: "" },
      ],
    ];
    for (const [args, error, env] of cases) {
      const root = freshRoot();
      const run = await sh(`sh ${script} ${args} --dry-run`, { FERRY_INSTALL_ROOT: root, ...env });
      expect({ args, code: run.code, error: run.stderr.trim().split("\n").at(-1) }).toEqual({
        args,
        code: 1,
        error: `ferry install: error: ${error}`,
      });
      expect(existsSync(join(root, "usr"))).toBe(false);
    }
    const rooted = await sh(`sh ${script} ${ok}`, { FERRY_INSTALL_ROOT: freshRoot() });
    expect(rooted.stderr.trim()).toBe("ferry install: error: FERRY_INSTALL_ROOT is only for --dry-run");
  });

  test("sh runs nothing before the whole script has arrived: a refusal never cuts the download short", async () => {
    const script = await (await fetch(`${server.url}/node/install.sh?server_type=ubuntu_arm`)).text();
    const file = join(dir, "install-halves.sh");
    writeFileSync(file, script);
    // The first half holds the CPU check; the second arrives later, as over a slow network.
    const half = script.indexOf('REQUIRED_ARCH" ]; then') + 200;
    const run = await sh(
      `{ head -c ${half} ${file}; sleep 0.3; tail -c +${half + 1} ${file} || echo "write failed" >&2; } | ` +
        `sh -s -- --panel http://127.0.0.1:1 --node-id 1 --token ${"t".repeat(40)} --dry-run`,
      { FERRY_INSTALL_ROOT: freshRoot(), FERRY_INSTALL_ARCH: "x86_64" },
    );
    expect({ code: run.code, stderr: run.stderr.trim() }).toEqual({
      code: 1,
      stderr: "ferry install: error: server type ubuntu_arm is for aarch64 machines; this one is x86_64",
    });
  });

  test("the wrong CPU is refused: ubuntu_arm on x86_64, and an agent built for another CPU", async () => {
    const arm = await makeNode("ubuntu_arm");
    const armCommand = `${await installCommand(arm)} --dry-run`;
    const onX86 = await sh(armCommand, { FERRY_INSTALL_ROOT: freshRoot(), FERRY_INSTALL_ARCH: "x86_64" });
    expect(onX86.stderr.trim()).toBe(
      "ferry install: error: server type ubuntu_arm is for aarch64 machines; this one is x86_64",
    );
    const root = freshRoot();
    const onArm = await sh(armCommand, { FERRY_INSTALL_ROOT: root, FERRY_INSTALL_ARCH: "aarch64" });
    expect({ code: onArm.code, stderr: onArm.stderr }).toEqual({ code: 0, stderr: "" });
    expect(onArm.stdout).toContain("releases/latest/download/Xray-linux-arm64-v8a.zip");

    // A real x86_64 executable as the agent: the script knows its CPU and refuses an arm64 node.
    process.env.FERRY_AGENT_BINARY = "/usr/bin/true";
    try {
      const script = await (await fetch(`${server.url}/node/install.sh?server_type=ubuntu_reality`)).text();
      expect(script).toContain("AGENT_ARCH='x86_64'");
      const row = await makeNode("ubuntu_reality");
      const run = await sh(`${await installCommand(row)} --dry-run`, {
        FERRY_INSTALL_ROOT: freshRoot(),
        FERRY_INSTALL_ARCH: "aarch64",
      });
      expect(run.stderr.trim()).toBe(
        "ferry install: error: the panel's agent is built for x86_64; this machine is aarch64",
      );
    } finally {
      process.env.FERRY_AGENT_BINARY = agentFile;
    }
  });
});
