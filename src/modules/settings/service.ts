import { type Db, tx } from "../../db/db.ts";
import { ADDRESS_KIND_TEXT, hostKind, urlHost } from "../../lib/addresses.ts";
import { ALLOW_PRIVATE_FLAG } from "../../lib/outbound.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { type AuditDiff, recordAudit } from "../audit/service.ts";
import type { Webhook } from "../webhook/schema.ts";
import {
  maskSettingValue,
  OUTBOUND_HOST_SETTINGS,
  OUTBOUND_URL_SETTINGS,
  SECRET_MASK,
  SECRET_SETTINGS,
  type SettingKey,
  type Settings,
  settingsSchema,
} from "./schema.ts";

/**
 * Refuses (1000) a patch that points a server the panel calls at this machine, the local network
 * or a link-local address, written as an address or as `localhost` (issue 26, C11). A name is
 * checked where it is used, after it resolves (lib/outbound.ts).
 */
export function refuseLocalTargets(patch: Partial<Settings>, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const targets: [SettingKey, string | null][] = [
    ...OUTBOUND_URL_SETTINGS.map((key): [SettingKey, string | null] => [key, urlHost(patch[key] ?? "")]),
    ...OUTBOUND_HOST_SETTINGS.map((key): [SettingKey, string | null] => [key, patch[key]?.trim() || null]),
  ];
  for (const webhook of patch.webhooks ?? []) targets.push(["webhooks", urlHost(webhook.url)]);
  for (const [key, host] of targets) {
    const kind = host === null ? null : hostKind(host);
    if (kind === null || kind === "public") continue;
    throw new RpcError(
      Code.badInput,
      `参数错误 ${key}: 不能指向${ADDRESS_KIND_TEXT[kind]}（${host}）；内网网关须以 ${ALLOW_PRIVATE_FLAG} 启动服务`,
    );
  }
}

/**
 * The webhooks to store for a saved list: a webhook sent with the mask as its secret keeps the
 * stored one (matched by id, else by URL), and one without an id is given one. A mask that matches
 * no stored webhook is refused (1000): there is no secret to keep.
 */
export function keepWebhookSecrets(saved: readonly Webhook[], stored: readonly Webhook[]): Webhook[] {
  return saved.map((webhook) => {
    const before =
      stored.find((old) => webhook.id !== "" && old.id === webhook.id) ??
      stored.find((old) => webhook.id === "" && old.url === webhook.url);
    const secret = webhook.secret === SECRET_MASK ? before?.secret : webhook.secret;
    if (!secret) throw new RpcError(Code.badInput, `参数错误 webhooks: ${webhook.url} 须填写密钥`);
    return { ...webhook, id: webhook.id || before?.id || newId(), secret };
  });
}

/**
 * How long cached settings are answered on PostgreSQL, where other replicas write them too: a
 * setting saved on one replica is in force on every replica within this (plus one read). SQLite
 * has one server process, whose own writes drop the cache at once.
 */
export const SHARED_SETTINGS_MAX_AGE_MS = 1_000;

/**
 * The key/value settings store. Values are JSON in the `settings` table; anything missing or
 * unreadable falls back to its typed default. Reads are cached until the next write by this
 * process, and on PostgreSQL for at most SHARED_SETTINGS_MAX_AGE_MS (another replica's write).
 */
export class SettingsStore {
  private cache: Settings | null = null;
  /** When the read that filled the cache started. */
  private cachedAt = 0;
  /** Moves on every update, so that a read which overlapped one is not cached (on PostgreSQL a read does not wait for the write). */
  private generation = 0;
  private readonly maxAgeMs: number;
  /** The read in progress outside any transaction, which callers meanwhile share. */
  private loading: Promise<Settings> | null = null;

  constructor(private readonly db: Db) {
    this.maxAgeMs = db.engine === "postgres" ? SHARED_SETTINGS_MAX_AGE_MS : Number.POSITIVE_INFINITY;
  }

  /** The cached settings are answered as they are, not as a promise: hot paths await them without a tick more. */
  all(): Settings | Promise<Settings> {
    if (this.cache && Date.now() - this.cachedAt < this.maxAgeMs) return this.cache;
    // The requests arriving as the cache expires share one read (not inside a transaction, whose
    // snapshot is its own).
    if (this.db.inTransaction) return this.load();
    if (!this.loading) {
      const loading = this.load().finally(() => {
        if (this.loading === loading) this.loading = null;
      });
      this.loading = loading;
    }
    return this.loading;
  }

  private async load(): Promise<Settings> {
    const generation = this.generation;
    const startedAt = Date.now();
    const rows = await this.db.all<{ key: string; value: string }>("SELECT key, value FROM settings");
    const raw: Record<string, unknown> = {};
    for (const row of rows) {
      try {
        raw[row.key] = JSON.parse(row.value);
      } catch {
        // A hand-edited bad value falls back to the default below.
      }
    }
    const shape = settingsSchema.shape;
    const settings = {} as Record<string, unknown>;
    for (const key of Object.keys(shape) as SettingKey[]) {
      const parsed = shape[key].safeParse(raw[key]);
      settings[key] = parsed.success ? parsed.data : shape[key].parse(undefined);
    }
    // Not cached when read inside a transaction: on PostgreSQL its snapshot may predate an update.
    if (generation === this.generation && !this.db.inTransaction) {
      this.cache = settings as Settings;
      this.cachedAt = startedAt;
    }
    return settings as Settings;
  }

  get<K extends SettingKey>(key: K): Settings[K] | Promise<Settings[K]> {
    const settings = this.all();
    return settings instanceof Promise ? settings.then((loaded) => loaded[key]) : settings[key];
  }

  /**
   * Writes the given keys (already validated) in one transaction. Masked secrets keep their value.
   * The keys whose value changed make one audit row (`settings.update`), secrets masked.
   */
  async update(patch: Partial<Settings>): Promise<Settings> {
    const now = Date.now();
    const upsert =
      "INSERT INTO settings (key, value, update_time) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, update_time = excluded.update_time";
    await tx(this.db, async () => {
      const before = await this.load();
      const diff: AuditDiff = {};
      for (const [key, value] of Object.entries(patch) as [SettingKey, unknown][]) {
        if (value === undefined) continue;
        if (SECRET_SETTINGS.includes(key) && value === SECRET_MASK) continue;
        const stored = key === "webhooks" ? keepWebhookSecrets(value as Webhook[], before.webhooks) : value;
        await this.db.run(upsert, key, JSON.stringify(stored), now);
        if (JSON.stringify(before[key]) === JSON.stringify(stored)) continue;
        diff[key] = { old: maskSettingValue(key, before[key]), new: maskSettingValue(key, stored) };
      }
      const keys = Object.keys(diff);
      if (keys.length > 0)
        await recordAudit(this.db, { action: "settings.update", target: keys.join(","), diff });
    });
    this.generation += 1;
    this.cache = null;
    this.loading = null;
    return await this.all();
  }

  /** The settings as an admin may see them: secrets replaced by a mask (or "" when unset). */
  async forDisplay(): Promise<Settings> {
    const shown = { ...(await this.all()) };
    for (const key of Object.keys(shown) as SettingKey[]) {
      (shown as Record<string, unknown>)[key] = maskSettingValue(key, shown[key]);
    }
    return shown as Settings;
  }
}
