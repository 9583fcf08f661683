import { resolve } from "node:path";
import type { Db } from "./db/db.ts";
import { ReadCache } from "./db/read-cache.ts";
import { Mailer } from "./mail/mailer.ts";
import type { DeviceState } from "./modules/device/schema.ts";
import { SettingsStore } from "./modules/settings/service.ts";
import type { UserRow } from "./modules/user/row.ts";
import type { PermissionGrant } from "./modules/user/schema.ts";
import { LOOPBACK_PROXIES, parseTrustedProxies, type TrustedProxies } from "./rpc/forwarded.ts";
import { RateLimiter } from "./rpc/rate-limit.ts";
import type { ServedSubscription } from "./subscription/served.ts";

/** Everything a service needs, created once per process (or per test server). */
export interface AppContext {
  db: Db;
  settings: SettingsStore;
  mailer: Mailer;
  /** Rate limits, counted in the database so that they hold across replicas (rpc/rate-limit.ts). */
  limiter: RateLimiter;
  /** Hot-path reads (session → user, a user's permissions), exact: see ReadCache. */
  cache: {
    sessions: ReadCache<{ user: UserRow; expireTime: number }>;
    permissions: ReadCache<PermissionGrant[]>;
    /** Subscriptions ready to send, by user, key, format and URL (null: no such user or key). */
    subscriptions: ReadCache<ServedSubscription>;
    /** A user's check-in of a business day or the day before, by user and day (signuse/service.ts). */
    signUses: ReadCache<{ day: string; streak: number; extra_reward: number }>;
    /** A user's trial grants still holding traffic, by user (trial/service.ts). */
    trialGrants: ReadCache<{ remaining: number; expire_time: number }[]>;
    /** A user's device limit and known devices, by user, for the subscription gate (device/service.ts). */
    devices: ReadCache<DeviceState>;
  };
  /** The reverse proxies whose X-Forwarded-For / -Proto / -Host are believed (see rpc/forwarded.ts). */
  trustedProxies: TrustedProxies;
  /** `--allow-private-urls`: the server may call loopback and private addresses (lib/outbound.ts). */
  allowPrivateUrls: boolean;
  /** `<data>/uploads`: the only folder uploaded images are written to and served from. */
  uploadsDir: string;
  /** `<data>/guide`: the operator's client installers and guide images, served at `/guide/...`. */
  guideDir: string;
}

export interface ContextOptions {
  /** The data directory (`<data>/ferry.db`, `<data>/uploads/`, `<data>/guide/`); "./data" when not given. */
  dataDir?: string;
  /** Proxies to trust: true = loopback, or a comma-separated list of addresses and CIDR ranges. */
  trustProxy?: boolean | string;
  /** Multiplies every rate limit; tests that are not about rate limits raise it. */
  rateLimitScale?: number;
  /** Let the server call loopback, private and link-local addresses (an internal gateway, test fakes). */
  allowPrivateUrls?: boolean;
}

export function createContext(db: Db, options: ContextOptions = {}): AppContext {
  const settings = new SettingsStore(db);
  return {
    db,
    settings,
    mailer: new Mailer(settings, options.allowPrivateUrls ?? false),
    limiter: new RateLimiter(db, options.rateLimitScale ?? 1),
    cache: {
      sessions: new ReadCache(db),
      permissions: new ReadCache(db),
      subscriptions: new ReadCache(db, 5_000),
      signUses: new ReadCache(db),
      trialGrants: new ReadCache(db),
      devices: new ReadCache(db),
    },
    trustedProxies: parseTrustedProxies(
      options.trustProxy === true ? LOOPBACK_PROXIES : options.trustProxy || "",
    ),
    allowPrivateUrls: options.allowPrivateUrls ?? false,
    uploadsDir: resolve(options.dataDir ?? "./data", "uploads"),
    guideDir: resolve(options.dataDir ?? "./data", "guide"),
  };
}
