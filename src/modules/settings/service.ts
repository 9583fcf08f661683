import { type Db, tx } from "../../db/db.ts";
import { ADDRESS_KIND_TEXT, hostKind, urlHost } from "../../lib/addresses.ts";
import { ALLOW_PRIVATE_FLAG } from "../../lib/outbound.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import {
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
 * The key/value settings store. Values are JSON in the `settings` table; anything missing or
 * unreadable falls back to its typed default. Reads are cached until the next write.
 */
export class SettingsStore {
  private cache: Settings | null = null;
  /** Moves on every update, so that a read which overlapped one is not cached (on PostgreSQL a read does not wait for the write). */
  private generation = 0;

  constructor(private readonly db: Db) {}

  /** The cached settings are answered as they are, not as a promise: hot paths await them without a tick more. */
  all(): Settings | Promise<Settings> {
    return this.cache ?? this.load();
  }

  private async load(): Promise<Settings> {
    const generation = this.generation;
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
    if (generation === this.generation && !this.db.inTransaction) this.cache = settings as Settings;
    return settings as Settings;
  }

  get<K extends SettingKey>(key: K): Settings[K] | Promise<Settings[K]> {
    const settings = this.all();
    return settings instanceof Promise ? settings.then((loaded) => loaded[key]) : settings[key];
  }

  /** Writes the given keys (already validated) in one transaction. Masked secrets keep their value. */
  async update(patch: Partial<Settings>): Promise<Settings> {
    const now = Date.now();
    const upsert =
      "INSERT INTO settings (key, value, update_time) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, update_time = excluded.update_time";
    await tx(this.db, async () => {
      for (const [key, value] of Object.entries(patch)) {
        if (value === undefined) continue;
        if (SECRET_SETTINGS.includes(key as SettingKey) && value === SECRET_MASK) continue;
        await this.db.run(upsert, key, JSON.stringify(value), now);
      }
    });
    this.generation += 1;
    this.cache = null;
    return await this.all();
  }

  /** The settings as an admin may see them: secrets replaced by a mask (or "" when unset). */
  async forDisplay(): Promise<Settings> {
    const shown = { ...(await this.all()) };
    for (const key of SECRET_SETTINGS) {
      (shown as Record<string, unknown>)[key] = shown[key] ? SECRET_MASK : "";
    }
    return shown;
  }
}
