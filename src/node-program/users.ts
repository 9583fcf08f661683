/**
 * Going from the running core config to a new one: when only the users of inbounds that take
 * live changes differ, the users are removed and added through HandlerService.AlterInbound and
 * nobody else's connection drops; any other difference needs the core restarted.
 *
 * Live changes: VMess and VLESS in both dialects; in xray also multi-user Shadowsocks and the
 * hysteria inbound. v2ray 4.34's Shadowsocks inbound has one user in its settings and is not a
 * user manager, so a change there restarts the core.
 */
import type { CoreConfig, CoreDialect, CoreInbound } from "./core-config.ts";
import { type CoreApiUser, coreTypeName, type TypedMessage } from "./grpc.ts";
import { ProtoWriter } from "./proto.ts";

type Client = Record<string, unknown>;

/** common.protocol.SecurityType.AUTO */
const SECURITY_AUTO = 2;

/** xray.proxy.shadowsocks.CipherType */
const SS_CIPHERS: Record<string, number> = {
  "aes-128-gcm": 5,
  "aes-256-gcm": 6,
  "chacha20-poly1305": 7,
  "chacha20-ietf-poly1305": 7,
  "xchacha20-poly1305": 8,
  "xchacha20-ietf-poly1305": 8,
  none: 9,
  plain: 9,
};

const text = (value: unknown) => (typeof value === "string" ? value : "");

/** How an inbound's users are listed and turned into API accounts; null: no live changes. */
interface LiveUsers {
  key: "clients" | "users";
  account(client: Client): TypedMessage;
}

function liveUsers(inbound: CoreInbound, dialect: CoreDialect): LiveUsers | null {
  const type = (name: string, message: ProtoWriter): TypedMessage => ({
    type: coreTypeName(dialect, name),
    value: message.finish(),
  });
  const settings = inbound.settings;
  switch (inbound.protocol) {
    case "vmess":
      return {
        key: "clients",
        account: (client) =>
          type(
            "proxy.vmess.Account",
            new ProtoWriter()
              .string(1, text(client.id))
              .message(3, new ProtoWriter().varint(1, SECURITY_AUTO)),
          ),
      };
    case "vless":
      return {
        key: "clients",
        account: (client) =>
          type(
            "proxy.vless.Account",
            new ProtoWriter().string(1, text(client.id)).string(2, text(client.flow)).string(3, "none"),
          ),
      };
    case "shadowsocks": {
      // xray's multi-user form only: with no clients xray builds a single-user server instead.
      const clients = settings.clients;
      if (dialect !== "xray" || !Array.isArray(clients) || clients.length === 0) return null;
      const method = text(settings.method);
      if (method.startsWith("2022-")) {
        return {
          key: "clients",
          account: (client) =>
            type("proxy.shadowsocks_2022.Account", new ProtoWriter().string(1, text(client.password))),
        };
      }
      return {
        key: "clients",
        account: (client) =>
          type(
            "proxy.shadowsocks.Account",
            new ProtoWriter()
              .string(1, text(client.password))
              .varint(2, SS_CIPHERS[text(client.method) || method] ?? 0),
          ),
      };
    }
    case "hysteria":
      if (dialect !== "xray") return null;
      return {
        key: "users",
        account: (client) =>
          type("proxy.hysteria.account.Account", new ProtoWriter().string(1, text(client.auth))),
      };
    default:
      return null;
  }
}

function clientsOf(inbound: CoreInbound, live: LiveUsers): Client[] {
  const list = inbound.settings[live.key];
  return Array.isArray(list) ? (list as Client[]) : [];
}

/** The config with the live-changeable user lists blanked: equal skeletons need no restart. */
function skeleton(config: CoreConfig, dialect: CoreDialect): string {
  return JSON.stringify({
    ...config,
    inbounds: config.inbounds.map((inbound) => {
      const live = liveUsers(inbound, dialect);
      return live ? { ...inbound, settings: { ...inbound.settings, [live.key]: "live" } } : inbound;
    }),
  });
}

export interface UserRemoval {
  tag: string;
  email: string;
}

export interface UserAddition {
  tag: string;
  user: CoreApiUser;
}

export interface CorePlan {
  /** The core must be restarted with the new config (the lists below are then empty). */
  restart: boolean;
  remove: UserRemoval[];
  add: UserAddition[];
}

/** What it takes to go from the running config (null: none) to the next one. */
export function planCoreChange(running: CoreConfig | null, next: CoreConfig, dialect: CoreDialect): CorePlan {
  if (!running || skeleton(running, dialect) !== skeleton(next, dialect)) {
    return { restart: true, remove: [], add: [] };
  }
  const plan: CorePlan = { restart: false, remove: [], add: [] };
  for (const inbound of next.inbounds) {
    const live = liveUsers(inbound, dialect);
    const before = running.inbounds.find((candidate) => candidate.tag === inbound.tag);
    if (!live || !before) continue;
    const old = new Map(
      clientsOf(before, live).map((client) => [text(client.email), JSON.stringify(client)]),
    );
    const now = new Map(clientsOf(inbound, live).map((client) => [text(client.email), client]));
    for (const [email, client] of old) {
      // A changed credential under the same e-mail (a reset subscription) is removed and added again.
      const kept = now.get(email);
      if (!kept || JSON.stringify(kept) !== client) plan.remove.push({ tag: inbound.tag, email });
    }
    for (const [email, client] of now) {
      if (old.get(email) === JSON.stringify(client)) continue;
      const level = typeof client.level === "number" ? client.level : 0;
      plan.add.push({ tag: inbound.tag, user: { email, level, account: live.account(client) } });
    }
  }
  return plan;
}
