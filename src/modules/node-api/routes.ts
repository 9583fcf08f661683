/**
 * The node API, compatible with V2Board / Xboard "UniProxy" (node-protocol.md §1): nodes poll it,
 * the panel never dials in for it. Every call carries `token`, `node_id` and `node_type` as query
 * parameters; the token is the node's own (agents.api_token), not one shared secret.
 *   GET  config     the node's settings (+ ETag, 304 on If-None-Match)
 *   GET  user       {users:[{id, uuid, speed_limit, device_limit}]} (+ ETag / 304); with
 *                   ?since=<ETag held> (our agent) {since, version, users, removed} when the panel
 *                   can answer what changed since that version, else the full list (user-delta.ts)
 *   POST push       {userNo:[upload, download]}; X-Request-Id makes a resend a no-op;
 *                   ?inbound=<tag> charges at that inbound's line scale; users the node was not
 *                   given are not charged but kept as anomalies (admission.ts, anomalies.ts)
 *   POST alive      {userNo:[ip, …]}, kept for the users the node was given
 *   GET  alivelist  {alive:{userNo: count}}
 *   POST status     cpu / mem / disk figures (accepted, not stored)
 * push and alive bodies are checked whole (report.ts): a malformed one is refused with 400, one
 * over the size bound with 413, and nothing of it is applied.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { jsonResponse, readBodyText, readJsonBody } from "../../lib/http.ts";
import { recordError } from "../errors/service.ts";
import { SERVER_TYPES } from "../node-record/schema.ts";
import { applyNodeReport } from "../traffic/charge.ts";
import { aliveCounts } from "./alive-ips.ts";
import { agentBinary, installScript, isServerType, NO_AGENT_BINARY } from "./install.ts";
import { type Checked, checkAlive, checkPush, NODE_BODY_MAX_BYTES } from "./report.ts";
import {
  agentVersionFrom,
  authenticateNode,
  bodyEtag,
  countConfigUpdate,
  isNodeType,
  keepAlive,
  type NodeType,
  nodeConfig,
  servedUserList,
  touchNode,
} from "./service.ts";

const refuse = (status: number, message: string) => jsonResponse(status, { message });

/** The body with its ETag, quoted; If-None-Match containing it gets 304 (Xboard's rule). */
function withEtag(
  request: Request,
  body: string,
  etag = bodyEtag(body),
  since = "",
): { response: Response; changed: boolean } {
  if (since === etag || (request.headers.get("if-none-match") ?? "").includes(etag)) {
    return { response: new Response(null, { status: 304, headers: { etag: `"${etag}"` } }), changed: false };
  }
  return {
    response: new Response(body, {
      headers: { "content-type": "application/json", etag: `"${etag}"`, "cache-control": "no-store" },
    }),
    changed: true,
  };
}

/** A push or alive body, read no further than its bound and checked whole; or the refusal to send. */
async function readReport<T>(
  request: Request,
  check: (text: string) => Checked<T>,
): Promise<{ value: T } | { refusal: Response }> {
  const body = await readBodyText(request, NODE_BODY_MAX_BYTES);
  if (!body.ok) {
    return {
      refusal:
        body.reason === "too_large"
          ? refuse(413, `body larger than ${NODE_BODY_MAX_BYTES} bytes`)
          : refuse(400, "body not received whole"),
    };
  }
  const checked = check(body.text);
  return checked.ok ? { value: checked.value } : { refusal: refuse(400, checked.message) };
}

export function nodeRoutes(app: AppContext) {
  /** The calling node, or the refusal to send. */
  async function caller(request: Request) {
    const query = new URL(request.url).searchParams;
    const token = query.get("token") ?? "";
    const nodeId = query.get("node_id") ?? "";
    const type = (query.get("node_type") ?? "").toLowerCase();
    if (!token || !nodeId) return { refusal: refuse(422, "token and node_id are required") };
    if (!isNodeType(type)) return { refusal: refuse(400, `unknown node_type ${type}`) };
    const row = await authenticateNode(app, nodeId, token);
    if (!row) return { refusal: refuse(403, "token is error") };
    await touchNode(app, row, agentVersionFrom(request.headers.get("user-agent") ?? ""));
    return { row, type: type as NodeType, query };
  }

  return new Elysia({ prefix: "/api/v1/server/UniProxy" })
    .get("/config", async ({ request }) => {
      const call = await caller(request);
      if ("refusal" in call) return call.refusal;
      const config = await nodeConfig(app, call.row, call.type);
      if (!config) return refuse(400, "Server does not exist");
      const { response, changed } = withEtag(request, JSON.stringify(config));
      if (changed) await countConfigUpdate(app, call.row.id);
      return response;
    })
    .get("/user", async ({ request }) => {
      const call = await caller(request);
      if ("refusal" in call) return call.refusal;
      const since = call.query.get("since") ?? "";
      const list = await servedUserList(app, call.row, Date.now(), since);
      const { response, changed } = withEtag(request, list.body, list.etag, since);
      if (changed) await countConfigUpdate(app, call.row.id);
      return response;
    })
    .post(
      "/push",
      async ({ request }) => {
        const call = await caller(request);
        if ("refusal" in call) return call.refusal;
        const usage = await readReport(request, checkPush);
        if ("refusal" in usage) return usage.refusal;
        const reportId = request.headers.get("x-request-id")?.slice(0, 100) || null;
        try {
          const result = await applyNodeReport(app, {
            agentId: call.row.id,
            reportId,
            inbound: call.query.get("inbound"),
            usage: usage.value,
            now: Date.now(),
          });
          return jsonResponse(200, {
            status: "success",
            message: "操作成功",
            data: true,
            error: null,
            ...result,
          });
        } catch (error) {
          // Not acknowledged: the agent keeps the report and sends it again.
          await recordError(app.db, "node push", error);
          return refuse(500, "push not applied");
        }
      },
      { parse: "none" },
    )
    .post(
      "/alive",
      async ({ request }) => {
        const call = await caller(request);
        if ("refusal" in call) return call.refusal;
        const report = await readReport(request, checkAlive);
        if ("refusal" in report) return report.refusal;
        await keepAlive(app, call.row.id, report.value);
        return jsonResponse(200, { data: true });
      },
      { parse: "none" },
    )
    .get("/alivelist", async ({ request }) => {
      const call = await caller(request);
      if ("refusal" in call) return call.refusal;
      return jsonResponse(200, { alive: await aliveCounts(app.db) });
    })
    .post(
      "/status",
      async ({ request }) => {
        const call = await caller(request);
        if ("refusal" in call) return call.refusal;
        await readJsonBody(request);
        return jsonResponse(200, { data: true, code: 0, message: "success" });
      },
      { parse: "none" },
    );
}

/**
 * Installing and upgrading nodes (issue 5 §4):
 *   GET /node/install.sh?server_type=<seed server type>   the installer (no secret in it)
 *   GET /node/ferry?node_id=N&token=T                      the agent executable (+ x-sha256)
 *   GET /node/ferry.sha256?node_id=N&token=T               "<sha256>  ferry"
 */
export function nodeInstallRoutes(app: AppContext) {
  const text = (status: number, body: string) =>
    new Response(body, {
      status,
      headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
    });

  /** The agent for a node that proves who it is, or the refusal to send. */
  async function download(request: Request) {
    const query = new URL(request.url).searchParams;
    const nodeId = query.get("node_id") ?? "";
    const token = query.get("token") ?? "";
    if (!nodeId || !token) return { refusal: text(422, "node_id and token are required\n") };
    if (!(await authenticateNode(app, nodeId, token))) return { refusal: text(403, "token is error\n") };
    const binary = await agentBinary();
    if (!binary) return { refusal: text(503, `${NO_AGENT_BINARY}\n`) };
    return { binary };
  }

  return new Elysia({ prefix: "/node" })
    .get("/install.sh", async ({ request }) => {
      const serverType = new URL(request.url).searchParams.get("server_type") ?? "";
      if (!isServerType(serverType)) {
        return text(404, `unknown server_type "${serverType}": one of ${SERVER_TYPES.join(", ")}\n`);
      }
      const binary = await agentBinary();
      return new Response(installScript(serverType, binary?.arch ?? ""), {
        headers: { "content-type": "text/x-shellscript; charset=utf-8", "cache-control": "no-store" },
      });
    })
    .get("/ferry", async ({ request }) => {
      const call = await download(request);
      if ("refusal" in call) return call.refusal;
      const { binary } = call;
      return new Response(Bun.file(binary.path), {
        headers: {
          "content-type": "application/octet-stream",
          "content-disposition": 'attachment; filename="ferry"',
          "cache-control": "no-store",
          "x-sha256": binary.sha256,
          "x-ferry-version": binary.version,
        },
      });
    })
    .get("/ferry.sha256", async ({ request }) => {
      const call = await download(request);
      if ("refusal" in call) return call.refusal;
      return text(200, `${call.binary.sha256}  ferry\n`);
    });
}
