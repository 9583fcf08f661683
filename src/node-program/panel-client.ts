/**
 * The agent's side of the UniProxy node API (node-protocol.md §1) with node_type `ferry`: config
 * and users with ETag / If-None-Match, pushes with a report id, online IPs.
 */
import type { FerryNodeConfig, NodeUser } from "../modules/node-api/service.ts";
import type { UserDelta } from "../modules/node-api/user-delta.ts";
import type { Report } from "./spool.ts";

const TIMEOUT_MS = 15_000;

/** A user pull: the full list, or what changed since the version the node holds. */
export type UsersAnswer = { users: NodeUser[] } | { delta: UserDelta };

export type Pulled<T> = { changed: false } | { changed: true; body: T; etag: string };

/** The panel's answer to an acknowledged push. */
export interface PushAnswer {
  duplicate: boolean;
  users: number;
  charged: number;
}

export class PanelError extends Error {}

/** The panel refused a report as malformed (400) or too large (413): resending it cannot help. */
export class ReportRefused extends PanelError {}

export class PanelClient {
  private readonly userAgent: string;

  constructor(private readonly options: { panel: string; nodeId: string; token: string; version: string }) {
    this.userAgent = `ferry-agent/${options.version}`;
  }

  url(action: string, extra: Record<string, string> = {}): string {
    const query = new URLSearchParams({
      token: this.options.token,
      node_id: this.options.nodeId,
      node_type: "ferry",
      ...extra,
    });
    return `${this.options.panel.replace(/\/+$/, "")}/api/v1/server/UniProxy/${action}?${query}`;
  }

  getConfig(etag: string): Promise<Pulled<FerryNodeConfig>> {
    return this.pull<FerryNodeConfig>("config", etag);
  }

  /**
   * The node's users. With the version held (`etag`), the panel may answer a delta from it
   * (user-delta.ts); else, or when it cannot, the full list.
   */
  async getUsers(etag: string): Promise<Pulled<UsersAnswer>> {
    const version = etag.replace(/^"|"$/g, "");
    const pulled = await this.pull<{ users: NodeUser[] } | UserDelta>(
      "user",
      etag,
      version ? { since: version } : {},
    );
    if (!pulled.changed) return pulled;
    const body = pulled.body;
    return { ...pulled, body: "since" in body ? { delta: body } : { users: body.users } };
  }

  /** Sends one report; resolves only on 200 (anything else throws: ReportRefused when it never can be). */
  async push(report: Report): Promise<PushAnswer> {
    const response = await this.send("push", { inbound: report.inbound }, report.usage, {
      "x-request-id": report.id,
    });
    const answer = (await response.json()) as Partial<PushAnswer>;
    return { duplicate: answer.duplicate === true, users: answer.users ?? 0, charged: answer.charged ?? 0 };
  }

  async alive(ips: Record<string, string[]>): Promise<void> {
    await this.send("alive", {}, ips);
  }

  private async pull<T>(
    action: string,
    etag: string,
    extra: Record<string, string> = {},
  ): Promise<Pulled<T>> {
    const response = await this.request(this.url(action, extra), {
      headers: { "user-agent": this.userAgent, ...(etag ? { "if-none-match": etag } : {}) },
    });
    if (response.status === 304) return { changed: false };
    if (response.status !== 200) throw await failure(action, response);
    return { changed: true, body: (await response.json()) as T, etag: response.headers.get("etag") ?? "" };
  }

  private async send(action: string, extra: Record<string, string>, body: unknown, headers = {}) {
    const response = await this.request(this.url(action, extra), {
      method: "POST",
      headers: { "user-agent": this.userAgent, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    if (response.status !== 200) throw await failure(action, response);
    return response;
  }

  private async request(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (error) {
      throw new PanelError(`panel unreachable: ${(error as Error).message}`);
    }
  }
}

async function failure(action: string, response: Response): Promise<PanelError> {
  const text = (await response.text().catch(() => "")).slice(0, 200);
  const message = `${action}: HTTP ${response.status} ${text}`;
  const refused = action === "push" && (response.status === 400 || response.status === 413);
  return refused ? new ReportRefused(message) : new PanelError(message);
}
