/**
 * The USDT watcher (payments.md §5): while a USDT payment is pending (or within its grace period),
 * one poller (on the replica holding the usdt-watcher lease, cluster/leases.ts) asks TronGrid for
 * the confirmed incoming TRC20 USDT transfers of each watched address, every usdtCheckInterval
 * seconds. Each transaction id is handled once
 * (usdt_transfers): an exact amount inside a payment's window pays it through markPaid; anything
 * else is recorded as unmatched for review, never credited.
 */
import type { AppContext } from "../context.ts";
import { tx } from "../db/db.ts";
import { outboundFetch } from "../lib/outbound.ts";
import { recordError } from "../modules/errors/service.ts";
import { markPaid } from "./credit.ts";
import type { PaymentRow } from "./provider.ts";
import { USDT_CONTRACT, USDT_GRACE_MS, usdtAddress } from "./usdt.ts";

/** Transfers up to this long before the oldest live payment are fetched too (clock skew). */
const LOOKBACK_MS = 60_000;
const PAGE_LIMIT = 200;
const MAX_PAGES = 50;
const FETCH_TIMEOUT_MS = 15_000;
const THROTTLED = new Set([403, 429, 503]);
const BACKOFF_MIN_MS = 30_000;
const BACKOFF_MAX_MS = 10 * 60_000;
/** How often the timer looks whether a poll is due (cheap: settings and one indexed query). */
const TICK_MS = 1_000;
const INT64_MAX = 2n ** 63n - 1n;

/** One item of `/v1/accounts/{addr}/transactions/trc20`. */
export interface Trc20Transfer {
  transaction_id: string;
  token_info: { symbol?: string; address: string; decimals?: number; name?: string };
  block_timestamp: number;
  from: string;
  to: string;
  type: string;
  value: string;
}

interface Trc20Page {
  success?: boolean;
  data?: Trc20Transfer[];
  meta?: { at?: number; page_size?: number; fingerprint?: string };
}

export interface PollResult {
  /** HTTP requests made to TronGrid. */
  requests: number;
  /** New transactions recorded in usdt_transfers. */
  recorded: number;
  credited: number;
  /** TronGrid answered 403/429/503: the timer backs off. */
  throttled: boolean;
}

interface WatcherState {
  running: Promise<PollResult> | null;
  lastPoll: number;
  backoffMs: number;
  backoffUntil: number;
  abort: AbortController;
}

const states = new WeakMap<AppContext, WatcherState>();

function stateOf(ctx: AppContext): WatcherState {
  let state = states.get(ctx);
  if (!state) {
    state = { running: null, lastPoll: 0, backoffMs: 0, backoffUntil: 0, abort: new AbortController() };
    states.set(ctx, state);
  }
  return state;
}

/** Addresses with a pending USDT payment not yet past expiry + grace, with the oldest one's creation. */
async function watchedAddresses(ctx: AppContext, now: number): Promise<{ address: string; since: number }[]> {
  return await ctx.db.all<{ address: string; since: number }>(
    `SELECT usdt_address AS address, MIN(create_time) AS since FROM payments
       WHERE provider = 'usdt_trc20' AND status = 'pending' AND usdt_address IS NOT NULL AND expire_time >= ?
       GROUP BY usdt_address`,
    now - USDT_GRACE_MS,
  );
}

/** The payment whose window [created, expiry + grace] holds the transfer at that exact amount. */
async function paymentForTransfer(ctx: AppContext, address: string, units: number, blockTime: number) {
  return await ctx.db.get<PaymentRow>(
    `SELECT * FROM payments
       WHERE provider = 'usdt_trc20' AND usdt_address = ?1 AND usdt_units = ?2
         AND create_time <= ?3 AND expire_time + ?4 >= ?3
       ORDER BY create_time DESC LIMIT 1`,
    address,
    units,
    blockTime,
    USDT_GRACE_MS,
  );
}

const isUsdtTransferTo = (item: Trc20Transfer, address: string) =>
  item?.type === "Transfer" &&
  item.token_info?.address === USDT_CONTRACT &&
  item.to === address &&
  typeof item.transaction_id === "string" &&
  /^[0-9a-fA-F]{64}$/.test(item.transaction_id) &&
  typeof item.value === "string" &&
  /^\d{1,30}$/.test(item.value) &&
  Number.isSafeInteger(item.block_timestamp);

/**
 * Records one transfer and credits the payment it matches, in one transaction. Returns whether it
 * was new and whether it credited.
 */
async function handleTransfer(
  ctx: AppContext,
  address: string,
  item: Trc20Transfer,
  now: number,
): Promise<{ recorded: boolean; credited: boolean }> {
  const value = BigInt(item.value);
  if (value > INT64_MAX) return { recorded: false, credited: false };
  const txId = item.transaction_id.toLowerCase();
  return await tx(ctx.db, async () => {
    const inserted = (
      await ctx.db.run(
        `INSERT INTO usdt_transfers (tx_id, from_address, to_address, units, block_time, status, note, create_time)
         VALUES (?, ?, ?, ?, ?, 'unmatched', 'no open order with this amount', ?) ON CONFLICT (tx_id) DO NOTHING`,
        txId,
        String(item.from ?? ""),
        address,
        value,
        item.block_timestamp,
        now,
      )
    ).changes;
    if (!inserted) return { recorded: false, credited: false };
    const payment =
      value <= BigInt(Number.MAX_SAFE_INTEGER)
        ? await paymentForTransfer(ctx, address, Number(value), item.block_timestamp)
        : null;
    if (!payment) return { recorded: true, credited: false };
    const setOutcome = async (status: "matched" | "unmatched" | "rejected", note: string) =>
      await ctx.db.run(
        "UPDATE usdt_transfers SET status = ?, trade_no = ?, note = ? WHERE tx_id = ?",
        status,
        payment.trade_no,
        note.slice(0, 500),
        txId,
      );
    if (payment.status === "paid") {
      // A second transfer of the same amount: money to review, not a second crediting.
      await setOutcome("unmatched", `payment already paid by ${payment.gateway_trade_no ?? ""}`);
      return { recorded: true, credited: false };
    }
    const outcome = await markPaid(
      ctx,
      {
        provider: "usdt_trc20",
        tradeNo: payment.trade_no,
        gatewayTradeNo: txId,
        amount: { currency: "USDT", minor: Number(value) },
        status: "paid",
        raw: JSON.stringify(item),
        source: "watcher",
      },
      now,
    );
    if (outcome.result === "credited") await setOutcome("matched", "credited");
    else await setOutcome("rejected", "reason" in outcome ? outcome.reason : outcome.result);
    return { recorded: true, credited: outcome.result === "credited" };
  });
}

async function transfersUrl(ctx: AppContext, address: string, minTimestamp: number): Promise<URL> {
  const base = (await ctx.settings.get("trongrid_url")).trim() || "https://api.trongrid.io";
  const url = new URL(
    `v1/accounts/${encodeURIComponent(address)}/transactions/trc20`,
    base.endsWith("/") ? base : `${base}/`,
  );
  url.search = new URLSearchParams({
    only_to: "true",
    only_confirmed: "true",
    contract_address: USDT_CONTRACT,
    limit: String(PAGE_LIMIT),
    min_timestamp: String(Math.max(0, minTimestamp)),
  }).toString();
  return url;
}

/** Reads every page for one address, handling transfers as they come. */
async function pollAddress(
  ctx: AppContext,
  state: WatcherState,
  address: string,
  minTimestamp: number,
  result: PollResult,
): Promise<void> {
  const apiKey = (await ctx.settings.get("trongrid_api_key")).trim();
  const headers: Record<string, string> = { accept: "application/json" };
  if (apiKey) headers["TRON-PRO-API-KEY"] = apiKey;
  const url = await transfersUrl(ctx, address, minTimestamp);
  for (let page = 0; page < MAX_PAGES; page += 1) {
    result.requests += 1;
    const response = await outboundFetch(
      url,
      { headers, signal: AbortSignal.any([state.abort.signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]) },
      ctx.allowPrivateUrls,
    );
    if (THROTTLED.has(response.status)) {
      await response.body?.cancel();
      result.throttled = true;
      return;
    }
    if (!response.ok) throw new Error(`TronGrid answered HTTP ${response.status} for ${address}`);
    const body = (await response.json()) as Trc20Page;
    const items = Array.isArray(body.data) ? body.data : [];
    const now = Date.now();
    for (const item of items) {
      if (!isUsdtTransferTo(item, address)) continue;
      const handled = await handleTransfer(ctx, address, item, now);
      if (handled.recorded) result.recorded += 1;
      if (handled.credited) result.credited += 1;
    }
    const fingerprint = body.meta?.fingerprint;
    if (!fingerprint || items.length === 0) return;
    // Paging keeps every other filter identical (TronGrid requires it).
    url.searchParams.set("fingerprint", fingerprint);
  }
}

async function pollAll(ctx: AppContext, state: WatcherState): Promise<PollResult> {
  const result: PollResult = { requests: 0, recorded: 0, credited: 0, throttled: false };
  const now = Date.now();
  state.lastPoll = now;
  if (!(await usdtAddress(ctx))) return result;
  for (const { address, since } of await watchedAddresses(ctx, now)) {
    await pollAddress(ctx, state, address, since - LOOKBACK_MS, result);
    if (result.throttled) break;
  }
  if (result.throttled) {
    state.backoffMs = Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_MIN_MS, state.backoffMs * 2));
    state.backoffUntil = Date.now() + state.backoffMs;
  } else if (result.requests > 0) {
    state.backoffMs = 0;
    state.backoffUntil = 0;
  }
  return result;
}

/**
 * One poll of every watched address, now. Polls never overlap: a call made while one runs waits
 * for it and then polls afresh (so a caller always sees transfers that existed when it called).
 * Makes no request when USDT is off or nothing is pending.
 */
export async function pollUsdtOnce(ctx: AppContext): Promise<PollResult> {
  const state = stateOf(ctx);
  while (state.running) await state.running.catch(() => undefined);
  const run = pollAll(ctx, state);
  state.running = run;
  try {
    return await run;
  } finally {
    if (state.running === run) state.running = null;
  }
}

async function pollDue(ctx: AppContext, state: WatcherState, now: number): Promise<boolean> {
  if (state.running || now < state.backoffUntil) return false;
  if (now - state.lastPoll < (await ctx.settings.get("usdtCheckInterval")) * 1000) return false;
  if (!(await usdtAddress(ctx))) return false;
  return (await watchedAddresses(ctx, now)).length > 0;
}

export interface UsdtWatcher {
  /** Stops the timer and waits for (aborting) a poll in flight. */
  stop(): Promise<void>;
}

/** The timer-driven watcher a server runs; its timer never keeps the process alive. */
export function startUsdtWatcher(ctx: AppContext): UsdtWatcher {
  const state = stateOf(ctx);
  // A watcher started again (its lease won back) polls with a signal of its own.
  if (state.abort.signal.aborted) state.abort = new AbortController();
  // The first poll comes one interval after start, like every later one.
  state.lastPoll = Date.now();
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(tick, TICK_MS);
    timer.unref?.();
  };
  const tick = async () => {
    try {
      if (await pollDue(ctx, state, Date.now())) await pollUsdtOnce(ctx);
    } catch (error) {
      if (!stopped) await recordError(ctx.db, "usdt watcher", error);
    } finally {
      schedule();
    }
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      state.abort.abort();
      await state.running?.catch(() => undefined);
    },
  };
}
