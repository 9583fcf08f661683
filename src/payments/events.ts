/**
 * The payment_events audit log (payments.md §6), bounded against strangers (issue 11, finding 13):
 * anyone can post to a notify URL, so
 * - a repeat of an event (same provider, result, reason and trade number) is counted on its row
 *   (repeat_count, last_time) instead of stored again;
 * - raw bodies and texts are cut (RAW_MAX_BYTES);
 * - a provider's notify URL adds at most REJECTED_PER_WINDOW new refused rows an hour; beyond that
 *   they are only counted, on one overflow row per provider and hour;
 * - refused and duplicate events expire after EVENT_DAYS. Credits and anomalies (money that
 *   arrived) are never merged away or deleted.
 * The cap is per provider, not per sender address: addresses are cheap (IPv6), so a per-address
 * cap would not bound the table.
 */
import { countRepeat, expireOncePerWindow, logWindowStart, oneCapAtATime } from "../db/counted-log.ts";
import type { Db } from "../db/db.ts";
import { cutUtf8 } from "../lib/text.ts";
import { DAY_MS } from "../lib/time.ts";
import { sha256Hex } from "../rpc/ids.ts";

export type EventResult = "credited" | "duplicate" | "rejected" | "anomaly";

export interface PaymentEvent {
  provider: string;
  tradeNo?: string;
  gatewayTradeNo?: string;
  result: EventResult;
  reason?: string;
  raw?: string;
}

export const RAW_MAX_BYTES = 2048;
const FIELD_MAX_BYTES = 200;
export const REJECTED_PER_WINDOW = 60;
/** Refused and duplicate events are kept this long after they were last seen. */
export const EVENT_DAYS = 90;

async function expireOldEvents(db: Db, now: number): Promise<void> {
  await expireOncePerWindow(
    db,
    "payment_events",
    now,
    async () =>
      await db.run(
        "DELETE FROM payment_events WHERE result IN ('rejected', 'duplicate') AND last_time < ?",
        now - EVENT_DAYS * DAY_MS,
      ),
  );
}

async function insertEvent(db: Db, event: Required<PaymentEvent>, fingerprint: string | null, now: number) {
  await db.run(
    `INSERT INTO payment_events (provider, trade_no, gateway_trade_no, result, reason, raw, fingerprint, repeat_count, create_time, last_time)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?8)
     ON CONFLICT (fingerprint) DO UPDATE SET repeat_count = payment_events.repeat_count + 1, last_time = excluded.last_time`,
    event.provider,
    event.tradeNo,
    event.gatewayTradeNo,
    event.result,
    event.reason,
    event.raw,
    fingerprint,
    now,
  );
}

async function refusedThisWindow(db: Db, provider: string, since: number): Promise<number> {
  return (
    (
      await db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM payment_events WHERE provider = ? AND result = 'rejected' AND create_time >= ?",
        provider,
        since,
      )
    )?.n ?? 0
  );
}

/** Records one payment event (see the file comment for what is merged, capped and expired). */
export async function logPaymentEvent(db: Db, event: PaymentEvent, now = Date.now()): Promise<void> {
  await expireOldEvents(db, now);
  const row = {
    provider: cutUtf8(event.provider, 40),
    tradeNo: cutUtf8(event.tradeNo ?? "", FIELD_MAX_BYTES),
    gatewayTradeNo: cutUtf8(event.gatewayTradeNo ?? "", FIELD_MAX_BYTES),
    result: event.result,
    reason: cutUtf8(event.reason ?? "", FIELD_MAX_BYTES),
    raw: cutUtf8(event.raw ?? "", RAW_MAX_BYTES),
  };
  // Every credit is its own row; anything else repeats the row of the same event.
  const fingerprint =
    row.result === "credited"
      ? null
      : sha256Hex([row.provider, row.result, row.reason, row.tradeNo].join("\n"));
  if (fingerprint && (await countRepeat(db, "payment_events", fingerprint, now))) return;
  if (row.result !== "rejected") return await insertEvent(db, row, fingerprint, now);
  await oneCapAtATime(db, "payment_events", async () => {
    const windowStart = logWindowStart(now);
    if ((await refusedThisWindow(db, row.provider, windowStart)) < REJECTED_PER_WINDOW)
      return await insertEvent(db, row, fingerprint, now);
    const overflow = sha256Hex(`overflow\n${row.provider}\n${windowStart}`);
    if (await countRepeat(db, "payment_events", overflow, now)) return;
    const reason = `本小时被拒绝的通知超过 ${REJECTED_PER_WINDOW} 条，之后的只计数（repeat_count）`;
    await insertEvent(db, { ...row, tradeNo: "", gatewayTradeNo: "", reason }, overflow, now);
  });
}
