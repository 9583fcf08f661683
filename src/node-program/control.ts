/**
 * The agent's control port: how the panel reaches a node. Every request carries
 * `Authorization: Bearer <the node's api_token>`, else 401.
 *   POST /sync     pull config and users now and apply them → {"ok":true,"users":N}
 *   POST /upgrade  {"url","sha256","version"}: download, verify, swap the executable, answer
 *                  {"ok":true}, then exit with EXIT_UPGRADED so the service manager restarts it
 *   GET  /status   {"version","users","core","pendingReports","lastPushTime"}
 */
import { jsonResponse, readJsonBody } from "../lib/http.ts";
import { sameSecret } from "../rpc/ids.ts";
import { parseUpgradeRequest, replaceExecutable, UpgradeError } from "./upgrade.ts";

/** Exit code after a successful upgrade (systemd Restart=always / OpenRC respawn start the new file). */
export const EXIT_UPGRADED = 75;

export interface AgentStatus {
  version: string;
  users: number;
  core: "running" | "stopped";
  /** Reports on disk not yet acknowledged: sealed ones and the open ones reads are merged into. */
  pendingReports: number;
  /** When the panel last acknowledged a report (ms since epoch, 0 = never). */
  lastPushTime: number;
}

/** What the control port asks of the agent. */
export interface ControlledAgent {
  sync(): Promise<{ users: number }>;
  status(): AgentStatus;
  /** The new executable is in place: stop cleanly and exit with EXIT_UPGRADED. */
  upgraded(version: string): void;
}

export interface ControlOptions {
  host: string;
  port: number;
  token: string;
  /** Relative upgrade URLs are resolved against it. */
  panelUrl: string;
  /** The file /upgrade replaces; null when there is none (running from source). */
  exe: string | null;
  agent: ControlledAgent;
}

export interface ControlServer {
  port: number;
  stop(): Promise<void>;
}

function authorized(request: Request, token: string): boolean {
  const header = request.headers.get("authorization") ?? "";
  return sameSecret(header.startsWith("Bearer ") ? header.slice(7).trim() : "", token);
}

export function startControlServer(options: ControlOptions): ControlServer {
  let upgrading = false;

  async function upgrade(request: Request): Promise<Response> {
    if (!options.exe) {
      return jsonResponse(409, {
        ok: false,
        error: "no executable to replace: run the ferry executable or pass --exe",
      });
    }
    if (upgrading) return jsonResponse(409, { ok: false, error: "an upgrade is already running" });
    upgrading = true;
    try {
      const wanted = parseUpgradeRequest(await readJsonBody(request), options.panelUrl);
      await replaceExecutable(wanted, options.exe);
      // Answer first; the agent stops (and exits) once the response is on its way.
      setTimeout(() => options.agent.upgraded(wanted.version), 50);
      return jsonResponse(200, { ok: true });
    } catch (error) {
      upgrading = false;
      if (error instanceof UpgradeError)
        return jsonResponse(error.status, { ok: false, error: error.message });
      throw error;
    }
  }

  async function route(request: Request): Promise<Response> {
    if (!authorized(request, options.token)) return jsonResponse(401, { ok: false, error: "unauthorized" });
    const path = new URL(request.url).pathname;
    const method = request.method;
    if (method === "GET" && path === "/status") return jsonResponse(200, options.agent.status());
    if (method === "POST" && path === "/sync") {
      try {
        const { users } = await options.agent.sync();
        return jsonResponse(200, { ok: true, users });
      } catch (error) {
        return jsonResponse(502, { ok: false, error: (error as Error).message });
      }
    }
    if (method === "POST" && path === "/upgrade") return upgrade(request);
    return jsonResponse(404, { ok: false, error: "not found" });
  }

  const server = Bun.serve({
    hostname: options.host,
    port: options.port,
    fetch: route,
    error: (error) => jsonResponse(500, { ok: false, error: error.message }),
  });
  return {
    port: server.port ?? options.port,
    stop: () => server.stop(true),
  };
}
