/**
 * Operator commands for the network: `ferry node list|add|show|status|upgrade|install-cmd`,
 * `ferry line list|add`, and `ferry sub url|render`. They validate with the routes' schemas (agentInput, lineInput) and call
 * the same services; `sub render` answers exactly what GET /api/subscript/… answers.
 */
import { type Command, Option } from "commander";
import type { AppContext } from "../src/context.ts";
import { ID_PATTERN } from "../src/lib/id-schema.ts";
import { findEntry } from "../src/modules/entry/service.ts";
import {
  type AgentLine,
  BRIDGES,
  LINE_PROTOCOLS,
  lineDefaultsForNode,
  lineInput,
  requiredPermission,
} from "../src/modules/line/schema.ts";
import { listLines, saveLine } from "../src/modules/line/service.ts";
import { listAnomalies } from "../src/modules/node-api/anomalies.ts";
import { installCommand, panelUrl } from "../src/modules/node-api/install.ts";
import { upgradeNode } from "../src/modules/node-api/upgrade.ts";
import { COUNTRIES } from "../src/modules/node-record/countries.ts";
import {
  type Agent,
  type AnomalyReason,
  agentInput,
  NODE_STATE_LABELS,
  NODE_TYPES,
  type NodeAnomaly,
  type NodeType,
  newNodeDefaults,
  nodeState,
  SERVER_TYPES,
  SS_METHODS,
} from "../src/modules/node-record/schema.ts";
import { findAgent, findAgentRow, listAgents, saveAgent } from "../src/modules/node-record/service.ts";
import { reconcileDays } from "../src/modules/traffic/reconcile.ts";
import type { ReconcileDay } from "../src/modules/traffic/reconcile-schema.ts";
import type { UserRow } from "../src/modules/user/row.ts";
import { findUserByEmail } from "../src/modules/user/service.ts";
import { setSecurityHeaders } from "../src/rpc/security-headers.ts";
import {
  CLIENTS,
  type Client,
  formatFor,
  isClient,
  subscriptionOrigin,
  subscriptionUrl,
} from "../src/subscription/clients.ts";
import type { Format } from "../src/subscription/model.ts";
import { renderSubscription, subscriptionHeaders, titleFor } from "../src/subscription/service.ts";
import { dialectForFetch, INVALID_VERSION_MESSAGE } from "../src/subscription/singbox-version.ts";
import { registerNodeRunCommand } from "./node-agent.ts";
import {
  dataOption,
  die,
  numberOption,
  type PrintTime,
  parseOrDie,
  printJsonOr,
  printListOr,
  textTable,
  timePrinter,
  withContext,
  withContextAsync,
} from "./shared.ts";

function checkId(what: string, value: string): string {
  if (!ID_PATTERN.test(value)) die(`not a ${what} id: ${value}`);
  return value;
}

async function agentOrDie(ctx: AppContext, id: string) {
  const row = await findAgentRow(ctx, checkId("node", id));
  if (!row) die(`no node ${id}`);
  return row;
}

// ---- ferry node ----------------------------------------------------------------------------

const nodeLine = (a: Agent) =>
  [
    a._id,
    a.country.code ? `${a.country.flag} ${a.name}` : a.name,
    a.type.padEnd(7),
    a.host ? `${a.ip} (${a.host})` : a.ip,
    `ctrl ${a.ctrl_port} port ${a.port} public ${a.public_port} relay ${a.zz_port}`,
    NODE_STATE_LABELS[nodeState(a)],
  ].join("  ");

/** `node show`: the node as the back office sees it, plus the agent's API token. */
type NodeDetails = Agent & { api_token: string };

function nodeDetails(details: NodeDetails): string {
  const type = details.type;
  const rows: [string, string | number, boolean?][] = [
    ["id", details._id],
    ["name", details.name],
    ["country", `${details.country.flag} ${details.country.code || "-"} ${details.country.name}`],
    ["type", details.type],
    ["ip", details.ip],
    ["host", details.host || "-"],
    ["ctrl port", details.ctrl_port],
    ["port", details.port],
    ["public port", details.public_port],
    ["relay port (zz)", details.zz_port],
    ["server type", details.serverType],
    ["ss method", details.ss_method, type === "v2ray"],
    ["ws path", details.ws_path, type === "v2ray"],
    ["reality public key", details.reality_public_key, type === "reality"],
    ["reality short id", details.reality_short_id, type === "reality"],
    ["status", NODE_STATE_LABELS[nodeState(details)]],
    ["agent version", details.agent_version || "-"],
    ["description", details.desc || "-"],
    ["api token", details.api_token],
  ];
  return rows
    .filter(([, , shown]) => shown !== false)
    .map(([name, value]) => `${name.padEnd(20)}${value}`)
    .join("\n");
}

interface NodeAddOptions {
  name: string;
  type: NodeType;
  ip: string;
  host?: string;
  country?: string;
  ctrlPort?: string;
  zzPort?: string;
  port?: string;
  publicPort?: string;
  serverType?: string;
  ssMethod?: string;
  desc?: string;
  data?: string;
  json?: boolean;
}

const NODE_FLAGS: Record<string, string> = {
  name: "--name",
  type: "--type",
  ip: "--ip",
  host: "--host",
  ctrl_port: "--ctrl-port",
  zz_port: "--zz-port",
  port: "--port",
  public_port: "--public-port",
  serverType: "--server-type",
  ss_method: "--ss-method",
  desc: "--desc",
};

/** The form a new node is saved from: the flags, else newNodeDefaults(type) as the back office fills it. */
function nodeForm(options: NodeAddOptions) {
  const defaults = newNodeDefaults(options.type);
  const port = numberOption("--port", options.port) ?? defaults.port;
  const country = options.country?.trim().toUpperCase() ?? "";
  if (country && !COUNTRIES.some((c) => c.code === country))
    die(`--country: unknown country code ${options.country} (two letters, e.g. HK, JP, US)`);
  return {
    name: options.name,
    type: options.type,
    ip: options.ip,
    host: options.host,
    country: { code: country },
    ctrl_port: numberOption("--ctrl-port", options.ctrlPort) ?? defaults.ctrl_port,
    zz_port: numberOption("--zz-port", options.zzPort) ?? defaults.zz_port,
    port,
    // Clients dial the port the core listens on unless the node sits behind a port mapping.
    public_port:
      numberOption("--public-port", options.publicPort) ??
      (options.port === undefined ? defaults.public_port : port),
    serverType: options.serverType ?? defaults.serverType,
    ss_method: options.ssMethod,
    desc: options.desc,
  };
}

/** `v2ray ctrl 888 port 10000 public 10000 relay 20000 ubuntu_x86; h2 …` for --help. */
function nodeDefaultsHelp(): string {
  return NODE_TYPES.map((type) => {
    const d = newNodeDefaults(type);
    return `${type} ctrl ${d.ctrl_port} port ${d.port} public ${d.public_port} relay ${d.zz_port} ${d.serverType}`;
  }).join("; ");
}

/** `node status`: how each node's agent is doing. */
interface NodeStatus {
  _id: string;
  name: string;
  nodeNo: number;
  status: boolean;
  agent_version: string;
  updateConfigTimes: number;
  lastSeenTime: number;
  onlineUsers: number;
  anomalies: number;
}

const toNodeStatus = (a: Agent): NodeStatus => ({
  _id: a._id,
  name: a.name,
  nodeNo: a.nodeNo,
  status: a.status,
  agent_version: a.agent_version,
  updateConfigTimes: a.updateConfigTimes,
  lastSeenTime: a.lastSeenTime,
  onlineUsers: a.onlineUsers,
  anomalies: a.anomalies,
});

const STATUS_HEAD = [
  "name",
  "node no",
  "status",
  "version",
  "updates",
  "last seen",
  "online users",
  "anomalies (30 d)",
];

function statusTable(nodes: NodeStatus[], at: PrintTime): string {
  if (nodes.length === 0) return "no nodes";
  return textTable([
    STATUS_HEAD,
    ...nodes.map((n) => [
      n.name,
      String(n.nodeNo),
      NODE_STATE_LABELS[nodeState(n)],
      n.agent_version || "-",
      String(n.updateConfigTimes),
      n.lastSeenTime ? at(n.lastSeenTime) : "never",
      String(n.onlineUsers),
      String(n.anomalies),
    ]),
  ]);
}

const ANOMALY_REASONS: Record<AnomalyReason, string> = {
  not_admitted: "not on its user list",
  unknown_user: "no such user",
  others: "users past the daily cap, summed",
};

function anomalyTable(rows: NodeAnomaly[], at: PrintTime): string {
  if (rows.length === 0) return "no anomalies in the last 30 days";
  return textTable([
    ["day", "user no", "email", "reason", "upload", "download", "reports", "last report"],
    ...rows.map((row) => [
      row.day,
      String(row.userNo),
      row.email || "-",
      ANOMALY_REASONS[row.reason],
      String(row.upload),
      String(row.download),
      String(row.reports),
      at(row.lastTime),
    ]),
  ]);
}

function reconcileTable(rows: ReconcileDay[]): string {
  if (rows.length === 0) return "no reports in these days";
  return textTable([
    ["day", "node", "reports", "raw bytes", "anomaly bytes", "charged bytes", "expected bytes", "divergence"],
    ...rows.map((row) => [
      row.day,
      row.nodeId,
      String(row.reports),
      String(row.rawBytes),
      String(row.anomalyBytes),
      String(row.chargedBytes),
      String(row.expectedChargedBytes),
      `${(row.divergenceRatio * 100).toFixed(3)}%${row.flagged ? " FLAGGED" : ""}`,
    ]),
  ]);
}

/** The JSON of `node reconcile`: the fields, then the flag. */
const reconcileJson = (row: ReconcileDay) => ({
  nodeId: row.nodeId,
  day: row.day,
  reports: row.reports,
  rawBytes: row.rawBytes,
  anomalyBytes: row.anomalyBytes,
  chargedBytes: row.chargedBytes,
  expectedChargedBytes: row.expectedChargedBytes,
  flagged: row.flagged,
});

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** The panel's address for nodes: --panel, else the setting panel_url; refused when neither is known. */
async function panelOrDie(ctx: AppContext, panel: string | undefined): Promise<string> {
  const url = await panelUrl(ctx, { explicit: panel });
  if (!url) die("no panel URL: pass --panel https://your-panel or set the setting panel_url");
  return url;
}

const panelOption = () =>
  new Option("--panel <url>", "the panel's address as nodes reach it (default: the setting panel_url)");

function registerNodeCommands(program: Command) {
  const node = program.command("node").description("proxy servers (nodes)");
  registerNodeRunCommand(node);

  node
    .command("list")
    .description("list every node")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { data?: string; json?: boolean }) => {
      const agents = await withContext(options.data, async (ctx) => await listAgents(ctx));
      printListOr(options.json ?? false, agents, nodeLine, "no nodes");
    });

  node
    .command("add")
    .description(
      "add a node; its API token, Reality keys, Hysteria2 and Shadowsocks secrets are generated. " +
        `Unset ports follow the type, as in the back office: ${nodeDefaultsHelp()}`,
    )
    .requiredOption("--name <name>", "name shown to customers")
    .addOption(new Option("--type <type>", "node type").choices(NODE_TYPES).makeOptionMandatory())
    .requiredOption("--ip <address>", "IP or domain clients dial directly")
    .option("--host <domain>", "the node's domain (required for reality: the camouflage SNI)")
    .option("--country <code>", "ISO 3166-1 two-letter code, e.g. HK")
    .option("--ctrl-port <port>", "port the node agent is reached on (default by type)")
    .option("--zz-port <port>", "port relay entries forward to (default by type)")
    .option("--port <port>", "port the proxy core listens on (default by type)")
    .option("--public-port <port>", "port clients dial directly (default: --port, else by type)")
    .addOption(new Option("--server-type <type>", "install flavour (default by type)").choices(SERVER_TYPES))
    .addOption(
      new Option("--ss-method <cipher>", "Shadowsocks cipher (default aes-256-gcm)").choices(SS_METHODS),
    )
    .option("--desc <text>", "description shown on the nodes page")
    .addOption(dataOption())
    .option("--json", "print the node as JSON")
    .action(async (options: NodeAddOptions) => {
      const input = parseOrDie(agentInput, nodeForm(options), NODE_FLAGS);
      const created = await withContext(options.data, async (ctx) => await saveAgent(ctx, input));
      printJsonOr(options.json ?? false, created, (a) => `created node ${nodeLine(a)}`);
    });

  node
    .command("show")
    .description(
      "one node with its API token (the node agent needs it); no other secret is printed: " +
        "not the Reality private key, the Hysteria2 obfuscation password, the Shadowsocks server key " +
        "or the SSH password",
    )
    .argument("<id>", "the node's id")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (id: string, options: { data?: string; json?: boolean }) => {
      const details = await withContext(options.data, async (ctx): Promise<NodeDetails> => {
        const row = await agentOrDie(ctx, id);
        return { ...((await findAgent(ctx, row.id)) as Agent), api_token: row.api_token };
      });
      printJsonOr(options.json ?? false, details, nodeDetails);
    });

  node
    .command("status")
    .description(
      "each node's agent: 正常 while it calls in, 异常 once it stopped, 未连接 until its first call; " +
        "its version, update count, last call, online users, " +
        "anomalies (reports for users it was not given; details: node anomalies <id>)",
    )
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { data?: string; json?: boolean }) => {
      const { nodes, at } = await withContext(options.data, async (ctx) => ({
        nodes: (await listAgents(ctx)).map(toNodeStatus),
        at: await timePrinter(ctx),
      }));
      printJsonOr(options.json ?? false, nodes, (list) => statusTable(list, at));
    });

  node
    .command("anomalies")
    .description(
      "traffic the node reported for users it was not given (not charged), per user and day, 30 days",
    )
    .argument("<id>", "the node's id")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (id: string, options: { data?: string; json?: boolean }) => {
      const { rows, at } = await withContext(options.data, async (ctx) => ({
        rows: await listAnomalies(ctx, (await agentOrDie(ctx, id)).id),
        at: await timePrinter(ctx),
      }));
      printJsonOr(options.json ?? false, rows, (list) => anomalyTable(list, at));
    });

  node
    .command("reconcile")
    .description(
      "per node and business day (last 30, newest first): reports applied, raw bytes of its customers, " +
        "anomaly bytes, bytes charged and the charge expected from the raw bytes and the multipliers " +
        "in force; a day differing by more than 0.1 % is flagged",
    )
    .option("--node <id>", "only this node")
    .option("--day <YYYY-MM-DD>", "only this business day (setting timezone)")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { node?: string; day?: string; data?: string; json?: boolean }) => {
      if (options.day !== undefined && !DAY_PATTERN.test(options.day))
        die(`not a day (YYYY-MM-DD): ${options.day}`);
      const rows = await withContext(options.data, async (ctx) => {
        const nodeId = options.node === undefined ? undefined : (await agentOrDie(ctx, options.node)).id;
        return await reconcileDays(ctx, { nodeId, day: options.day });
      });
      printJsonOr(options.json ?? false, rows.map(reconcileJson), () => reconcileTable(rows));
    });

  node
    .command("upgrade")
    .description(
      "ask the node's agent (on its control port) to install this ferry executable and restart; " +
        "it downloads it from the panel and checks its SHA-256",
    )
    .argument("<id>", "the node's id")
    .addOption(panelOption())
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (id: string, options: { panel?: string; data?: string; json?: boolean }) => {
      const result = await withContextAsync(options.data, async (ctx) => {
        const row = await agentOrDie(ctx, id);
        try {
          return {
            name: row.name,
            ...(await upgradeNode(ctx, row.id, await panelOrDie(ctx, options.panel))),
          };
        } catch (error) {
          throw new Error(`升级失败: ${(error as Error).message}`);
        }
      });
      printJsonOr(
        options.json ?? false,
        result,
        (r) => `upgraded ${r.name} to ${r.version} (sha256 ${r.sha256})`,
      );
    });

  node
    .command("install-cmd")
    .description(
      "print the one-line command that installs or updates the node's agent (run it as root on the node; " +
        "it holds the node's token)",
    )
    .argument("<id>", "the node's id")
    .addOption(panelOption())
    .addOption(dataOption())
    .action(async (id: string, options: { panel?: string; data?: string }) => {
      const command = await withContext(
        options.data,
        async (ctx) =>
          await installCommand(ctx, (await agentOrDie(ctx, id)).id, await panelOrDie(ctx, options.panel)),
      );
      console.log(command);
    });
}

// ---- ferry line ----------------------------------------------------------------------------

function lineText(line: AgentLine, nodeNames: Map<string, string>, entryNames: Map<string, string>) {
  const bridge =
    line.bridge === "report" ? `report via ${entryNames.get(line.entryID) ?? "(no entry)"}` : line.bridge;
  const flags = [
    line.public ? "" : "private",
    line.fixName ? "fixed name" : "",
    line.disableForAgency ? "no agency" : "",
    requiredPermission(line) ? `needs permission ${line.permissionRequire}` : "",
  ].filter(Boolean);
  return [
    line._id,
    line.name,
    `on ${nodeNames.get(line.agentID) ?? line.agentID}`,
    line.protocol,
    bridge,
    `${line.num} × ${line.scale}x`,
    ...flags,
  ].join("  ");
}

async function lineLister(ctx: AppContext) {
  const nodeNames = new Map((await listAgents(ctx)).map((a) => [a._id, a.name]));
  const entryIds = new Map<string, string>();
  return async (line: AgentLine) => {
    if (line.entryID && !entryIds.has(line.entryID))
      entryIds.set(line.entryID, (await findEntry(ctx, line.entryID))?.name ?? line.entryID);
    return lineText(line, nodeNames, entryIds);
  };
}

interface LineAddOptions {
  node: string;
  name: string;
  protocol?: string;
  bridge?: string;
  entry?: string;
  bridgeAddr?: string;
  scale?: string;
  num?: string;
  permission?: string;
  private?: boolean;
  fixName?: boolean;
  agency: boolean;
  data?: string;
  json?: boolean;
}

const LINE_FLAGS: Record<string, string> = {
  name: "--name",
  agentID: "--node",
  protocol: "--protocol",
  bridge: "--bridge",
  entryID: "--entry",
  scale: "--scale",
  num: "--num",
  permissionRequire: "--permission",
  bridgeAddr: "--bridge-addr",
};

function registerLineCommands(program: Command) {
  const line = program.command("line").description("agent lines: what subscriptions list");

  line
    .command("list")
    .description("list lines in subscription order")
    .option("--node <id>", "only this node's lines")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { node?: string; data?: string; json?: boolean }) => {
      const { lines, text } = await withContext(options.data, async (ctx) => {
        if (options.node !== undefined) await agentOrDie(ctx, options.node);
        const lines = await listLines(ctx, options.node);
        const describe = await lineLister(ctx);
        const text: string[] = [];
        for (const line of lines) text.push(await describe(line));
        return { lines, text };
      });
      printJsonOr(options.json ?? false, lines, () => (text.length ? text.join("\n") : "no lines"));
    });

  line
    .command("add")
    .description(
      "add a line to a node. Protocol defaults by node type (h2 → h2, reality → reality, " +
        "v2ray → vmesh_tcp); the bridge is report (relayed) with --entry, else none (direct); h2 is always direct",
    )
    .requiredOption("--node <id>", "the node's id")
    .requiredOption("--name <name>", "line name (proxy names are built from it)")
    .addOption(new Option("--protocol <protocol>", "protocol").choices(LINE_PROTOCOLS))
    .addOption(
      new Option("--bridge <bridge>", "none = direct, report = via an entry, cf_cdn = via CDN").choices(
        BRIDGES,
      ),
    )
    .option("--entry <id>", "relay entry id (bridge report)")
    .option("--bridge-addr <address>", "CDN address clients dial (bridge cf_cdn; default the node's host)")
    .option("--scale <x>", "traffic multiplier shown in the name (default 1)")
    .option("--num <n>", "copies listed (default 1)")
    .option("--permission <id>", "only users holding this permission see the line")
    .option("--private", "not listed in any subscription")
    .option("--fix-name", "do not number copies (then --num must be 1)")
    .option("--no-agency", "hidden from agency users")
    .addOption(dataOption())
    .option("--json", "print the line as JSON")
    .action(async (options: LineAddOptions) => {
      const { created, text } = await withContext(options.data, async (ctx) => {
        const agent = await agentOrDie(ctx, options.node);
        const defaults = lineDefaultsForNode(agent.type, options.entry !== undefined);
        const input = parseOrDie(
          lineInput,
          {
            name: options.name,
            agentID: agent.id,
            protocol: options.protocol ?? defaults.protocol,
            bridge: options.bridge ?? defaults.bridge,
            entryID: options.entry,
            bridgeAddr: options.bridgeAddr,
            scale: numberOption("--scale", options.scale),
            num: numberOption("--num", options.num),
            public: !options.private,
            fixName: options.fixName ?? false,
            disableForAgency: !options.agency,
            permissionRequire: options.permission,
          },
          LINE_FLAGS,
        );
        const created = await saveLine(ctx, input);
        return { created, text: (await lineLister(ctx))(created) };
      });
      printJsonOr(options.json ?? false, created, () => `created line ${text}`);
    });
}

// ---- ferry sub -----------------------------------------------------------------------------

function clientOption(value: string): Client {
  if (!isClient(value)) die(`--client must be one of ${CLIENTS.join(", ")}`);
  return value;
}

/** key=value pairs for the link's query (e.g. name=…, flag=…, base64=0). */
function queryParams(pairs: string[] = []): Record<string, string> {
  const params: Record<string, string> = {};
  for (const pair of pairs) {
    const split = pair.indexOf("=");
    if (split <= 0) die(`--param must be key=value: ${pair}`);
    params[pair.slice(0, split)] = pair.slice(split + 1);
  }
  return params;
}

async function userOrDie(ctx: AppContext, email: string): Promise<UserRow> {
  const user = await findUserByEmail(ctx, email.trim().toLowerCase());
  if (!user) die(`no account with e-mail ${email}`);
  return user;
}

/** The describe_host setting, else --host, as the SPA does with the site the customer is on. */
async function linkOrigin(ctx: AppContext, host: string | undefined): Promise<string> {
  const origin = subscriptionOrigin(
    await ctx.settings.get("describe_host"),
    subscriptionOrigin(host ?? "", ""),
  );
  if (!origin) die("the describe_host setting is empty: give --host https://your-site");
  try {
    const url = new URL(origin);
    if (url.pathname !== "/" || url.search || url.hash) throw new Error("not an origin");
    return url.origin;
  } catch {
    die(`not an origin (scheme and host, e.g. https://sub.example.com): ${origin}`);
  }
}

interface SubOptions {
  client: string;
  host?: string;
  param?: string[];
  data?: string;
  json?: boolean;
}

interface SubLink {
  email: string;
  client: Client;
  url: string;
}

async function subscriptionLink(ctx: AppContext, email: string, options: SubOptions) {
  const client = clientOption(options.client);
  const user = await userOrDie(ctx, email);
  const origin = await linkOrigin(ctx, options.host);
  const url = subscriptionUrl(
    origin,
    client,
    { _id: user.id, userkey: user.userkey },
    queryParams(options.param),
  );
  return { user, client, origin, url };
}

interface Rendered {
  url: string;
  format: Format;
  headers: Record<string, string>;
  body: string;
}

function registerSubCommands(program: Command) {
  const sub = program.command("sub").description("customers' subscription links");
  const hostOption = () =>
    new Option("--host <origin>", "site origin for the link when the describe_host setting is empty");
  const paramOption = () =>
    new Option("--param <key=value...>", "query parameters of the link (name, flag, base64, …)");

  sub
    .command("url")
    .description("print a customer's subscription link (host: the describe_host setting, else --host)")
    .argument("<email>", "the account's e-mail")
    .addOption(new Option("--client <client>", `one of ${CLIENTS.join(", ")}`).default("auto"))
    .addOption(hostOption())
    .addOption(paramOption())
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (email: string, options: SubOptions) => {
      const link = await withContext(options.data, async (ctx): Promise<SubLink> => {
        const { user, client, url } = await subscriptionLink(ctx, email, options);
        return { email: user.email, client, url };
      });
      printJsonOr(options.json ?? false, link, (l) => l.url);
    });

  sub
    .command("render")
    .description("print exactly the body a client fetching the customer's link receives")
    .argument("<email>", "the account's e-mail")
    .requiredOption("--client <client>", `one of ${CLIENTS.join(", ")}`)
    .option("--ua <user-agent>", "the client's User-Agent (picks the format for --client auto)", "")
    .option("--headers", "print the response headers, a blank line, then the body")
    .addOption(hostOption())
    .addOption(paramOption())
    .addOption(dataOption())
    .option("--json", "print URL, format, headers and body as JSON")
    .action(async (email: string, options: SubOptions & { ua: string; headers?: boolean }) => {
      const rendered = await withContext(options.data, async (ctx): Promise<Rendered> => {
        const { user, client, origin, url } = await subscriptionLink(ctx, email, options);
        // What GET /api/subscript/{client}/{userId}/{userkey} does with the same URL and UA.
        const query = new URL(url).searchParams;
        const format = formatFor(client, options.ua, query.get("flag"));
        const singbox = dialectForFetch(format, options.ua, query.get("version"));
        if (singbox === "invalid") die(INVALID_VERSION_MESSAGE);
        const file = await renderSubscription(ctx, user, {
          format,
          url,
          title: titleFor(query),
          query,
          singbox,
        });
        // The server adds its security headers to every answer (HSTS only over https).
        const served = new Headers(subscriptionHeaders(file));
        setSecurityHeaders(served, origin.startsWith("https:"));
        return { url, format, headers: Object.fromEntries(served), body: file.body };
      });
      if (options.json) return printJsonOr(true, rendered, () => "");
      if (options.headers) {
        const head = Object.entries(rendered.headers).map(([name, value]) => `${name}: ${value}`);
        process.stdout.write(`${head.join("\n")}\n\n`);
      }
      process.stdout.write(rendered.body);
    });
}

export function registerNetworkCommands(program: Command) {
  registerNodeCommands(program);
  registerLineCommands(program);
  registerSubCommands(program);
}
