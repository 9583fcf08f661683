/**
 * Traffic transfers (issue 14 §5). A sender turns whole G of permanent traffic into a code
 * (push_spend); whoever redeems the code first gets pushNumber × (1 − the cost rate of creation)
 * (push_receive). Until then the sender may take it back (撤回), and after PUSH_RETURN_DAYS it goes
 * back by itself; either way the full amount returns as a positive push_spend record.
 */
import type { AppContext } from "../../context.ts";
import { rowOrderSql, tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import type { RateRule } from "../../rpc/rate-limit.ts";
import { startPeriodic } from "../errors/periodic.ts";
import { changeTraffic } from "../ledger/service.ts";
import { createNotice } from "../notice/service.ts";
import { queueUserMessage } from "../telegram/outbox.ts";
import type { TrafficRecordType } from "../traffic/schema.ts";
import { permanentTraffic } from "../trial/service.ts";
import {
  PUSH_CODE_ALPHABET,
  PUSH_CODE_LENGTH,
  PUSH_RETURN_DAYS,
  PUSHES_PER_HOUR,
  type Push,
  type PushList,
  PushMsg,
  type PushState,
  RECEIVE_FAILURES_PER_10_MIN,
  receiveBytes,
} from "./schema.ts";

export const PUSH_RETURN_MS = PUSH_RETURN_DAYS * DAY_MS;
const LIST_LIMIT = 200;
const HREF = "/#/push";

const CREATES: RateRule = { name: "push-creates", max: PUSHES_PER_HOUR, windowMs: 60 * 60_000 };
const RECEIVE_FAILURES: RateRule = {
  name: "push-receive-failures",
  max: RECEIVE_FAILURES_PER_10_MIN,
  windowMs: 10 * 60_000,
};

interface PushRow {
  id: string;
  code: string;
  from_user_id: string;
  to_user_id: string | null;
  push_number: number;
  receive_number: number;
  state: PushState;
  create_time: number;
  finish_time: number | null;
}

/**
 * The least G one transfer moves, and one agency allocation too (issue 26, C8): the minPushNum
 * setting (seed 000 §9), read here only.
 */
export async function transferMinimumG(ctx: AppContext): Promise<number> {
  return await ctx.settings.get("minPushNum");
}

/** G for messages: at most two decimals, no trailing zeros ("20", "13.4"). */
const g = (bytes: number) => String(Number((bytes / GB).toFixed(2)));

function toPush(row: PushRow, viewerId: string): Push {
  const sent = row.from_user_id === viewerId;
  return {
    _id: row.id,
    pushNumber: row.push_number / GB,
    receiveNumber: row.receive_number / GB,
    code: sent ? row.code : "",
    state: row.state,
    direction: sent ? "sent" : "received",
    createTime: row.create_time,
    finishTime: row.finish_time ?? 0,
    returnTime: row.state === "created" ? row.create_time + PUSH_RETURN_MS : 0,
  };
}

/** A code of PUSH_CODE_LENGTH characters; 32 symbols divide 256, so every symbol is equally likely. */
function randomPushCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(PUSH_CODE_LENGTH));
  return Array.from(bytes, (b) => PUSH_CODE_ALPHABET[b % PUSH_CODE_ALPHABET.length]).join("");
}

async function unusedCode(ctx: AppContext): Promise<string> {
  const taken = "SELECT id FROM pushes WHERE code = ?";
  for (;;) {
    const code = randomPushCode();
    if (!(await ctx.db.get<{ id: string }>(taken, code))) return code;
  }
}

async function credit(
  ctx: AppContext,
  userId: string,
  type: TrafficRecordType,
  bytes: number,
  desc: string,
  now: number,
) {
  await changeTraffic(ctx.db, {
    userId,
    type,
    desc,
    traffic: bytes,
    now,
    timeZone: await ctx.settings.get("timezone"),
  });
}

/** The caller's transfers, sent and received, newest first; its overdue ones are returned first. */
export async function listPushes(ctx: AppContext, userId: string, now = Date.now()): Promise<PushList> {
  await returnExpiredPushes(ctx, now, userId);
  const rows = await ctx.db.all<PushRow>(
    `SELECT * FROM pushes WHERE from_user_id = ?1 OR to_user_id = ?1
       ORDER BY create_time DESC, ${rowOrderSql(ctx.db)} DESC LIMIT ?2`,
    userId,
    LIST_LIMIT,
  );
  return {
    minPushNum: await transferMinimumG(ctx),
    costRate: await ctx.settings.get("pushCostRate"),
    returnDays: PUSH_RETURN_DAYS,
    pushList: rows.map((row) => toPush(row, userId)),
  };
}

/** Gives `fn` one of the account's hourly transfers; a refused transfer gives it back. */
function withCreateSlot<T>(ctx: AppContext, userId: string, fn: () => Promise<T>): Promise<T> {
  return ctx.limiter.succeeding(
    [{ rule: CREATES, key: userId }],
    () => new RpcError(Code.pushTooFrequent, PushMsg.tooFrequent),
    fn,
  );
}

/**
 * Moves `pushNumberG` whole G of the sender's permanent traffic into a new transfer and answers it
 * with its code: 1037 below minPushNum or not whole, 1038 more than the permanent traffic, 1039 when
 * the account already created PUSHES_PER_HOUR this hour.
 */
export async function createPush(
  ctx: AppContext,
  sender: { id: string; is_agency: number },
  pushNumberG: number,
  now = Date.now(),
): Promise<Push> {
  if (sender.is_agency) throw new RpcError(Code.forbidden, PushMsg.agencyRefused);
  const min = await transferMinimumG(ctx);
  if (pushNumberG < min) throw new RpcError(Code.pushAmountTooLow, PushMsg.amountTooLow(min));
  if (!Number.isSafeInteger(pushNumberG)) throw new RpcError(Code.pushAmountTooLow, PushMsg.amountNotWhole);
  const bytes = pushNumberG * GB;
  return withCreateSlot(
    ctx,
    sender.id,
    async () =>
      await tx(ctx.db, async () => {
        const available = await permanentTraffic(ctx.db, sender.id, now);
        if (available < bytes) throw new RpcError(Code.pushNotEnoughTraffic, PushMsg.notEnough(g(available)));
        await credit(ctx, sender.id, "push_spend", -bytes, PushMsg.spendDesc(g(bytes)), now);
        const row = (await ctx.db.get<PushRow>(
          `INSERT INTO pushes (id, code, from_user_id, push_number, receive_number, create_time)
           VALUES (?, ?, ?, ?, ?, ?) RETURNING *`,
          newId(now),
          await unusedCode(ctx),
          sender.id,
          bytes,
          receiveBytes(bytes, await ctx.settings.get("pushCostRate")),
          now,
        )) as PushRow;
        return toPush(row, sender.id);
      }),
  );
}

/** Why a code could not be received or cancelled by `userId` (all 1040). */
async function refusal(ctx: AppContext, userId: string, code: string, asSender: boolean): Promise<RpcError> {
  const row = await ctx.db.get<PushRow>("SELECT * FROM pushes WHERE code = ?", code);
  if (row && row.from_user_id === userId) {
    if (!asSender) return new RpcError(Code.pushCodeInvalid, PushMsg.ownCode);
    if (row.state === "received") return new RpcError(Code.pushCodeInvalid, PushMsg.alreadyReceived);
    if (row.state === "returned") return new RpcError(Code.pushCodeInvalid, PushMsg.alreadyReturned);
  }
  // Another account's transfer looks exactly like an unknown code.
  return new RpcError(Code.pushCodeInvalid, PushMsg.codeInvalid);
}

/**
 * Credits a waiting transfer to `userId`. The conditional UPDATE lets exactly one of any number of
 * concurrent receivers (or a racing 撤回) win. Refused tries count against the account (1039).
 */
export async function receivePush(
  ctx: AppContext,
  userId: string,
  code: string,
  now = Date.now(),
): Promise<Push> {
  // Taken outside the transaction, so that a refused try (it throws) still counts.
  const slot = await ctx.limiter.reserve([{ rule: RECEIVE_FAILURES, key: userId }]);
  if (!slot) throw new RpcError(Code.pushTooFrequent, PushMsg.receiveTooFrequent);
  const push = await tx(ctx.db, async () => {
    const row = await ctx.db.get<PushRow>(
      `UPDATE pushes SET state = 'received', to_user_id = ?1, finish_time = ?2
         WHERE code = ?3 AND state = 'created' AND from_user_id <> ?1 AND create_time > ?4
         RETURNING *`,
      userId,
      now,
      code,
      now - PUSH_RETURN_MS,
    );
    if (!row) throw await refusal(ctx, userId, code, false);
    const rate = ((1 - row.receive_number / row.push_number) * 100).toFixed(0);
    const [sent, received] = [g(row.push_number), g(row.receive_number)];
    await credit(
      ctx,
      userId,
      "push_receive",
      row.receive_number,
      PushMsg.receiveDesc(received, sent, rate),
      now,
    );
    const text = PushMsg.receivedNotice(sent, received);
    await createNotice(ctx, { userId: row.from_user_id, desc: text, href: HREF });
    await queueUserMessage(ctx, row.from_user_id, text, `push-received:${row.id}`);
    return toPush(row, userId);
  });
  await slot.release(); // only refused tries count
  return push;
}

/** The sender takes a waiting transfer back (撤回): the full amount returns, the code stops working. */
export async function cancelPush(
  ctx: AppContext,
  userId: string,
  code: string,
  now = Date.now(),
): Promise<Push> {
  return await tx(ctx.db, async () => {
    const row = await ctx.db.get<PushRow>(
      `UPDATE pushes SET state = 'returned', finish_time = ?1
         WHERE code = ?2 AND from_user_id = ?3 AND state = 'created' RETURNING *`,
      now,
      code,
      userId,
    );
    if (!row) throw await refusal(ctx, userId, code, true);
    await credit(ctx, userId, "push_spend", row.push_number, PushMsg.cancelDesc(g(row.push_number)), now);
    return toPush(row, userId);
  });
}

/**
 * Returns every transfer waiting PUSH_RETURN_DAYS or longer at `now` (only `fromUserId`'s when
 * given) to its sender, with a notice and a bot message. Answers how many went back.
 */
export async function returnExpiredPushes(
  ctx: AppContext,
  now = Date.now(),
  fromUserId?: string,
): Promise<number> {
  return await tx(ctx.db, async () => {
    const rows = await ctx.db.all<PushRow>(
      `UPDATE pushes SET state = 'returned', finish_time = ?1
         WHERE state = 'created' AND create_time <= ?2 AND (CAST(?3 AS TEXT) IS NULL OR from_user_id = ?3)
         RETURNING *`,
      now,
      now - PUSH_RETURN_MS,
      fromUserId ?? null,
    );
    for (const row of rows) {
      const sent = g(row.push_number);
      await credit(ctx, row.from_user_id, "push_spend", row.push_number, PushMsg.expireDesc(sent), now);
      await createNotice(ctx, { userId: row.from_user_id, desc: PushMsg.expiredNotice(sent), href: HREF });
      await queueUserMessage(ctx, row.from_user_id, PushMsg.expiredNotice(sent), `push-returned:${row.id}`);
    }
    return rows.length;
  });
}

const PUSH_SWEEP_INTERVAL_MS = 10 * 60_000;

/** Returns overdue transfers at start and then every intervalMs; stop() ends it. */
export async function startPushSweeper(ctx: AppContext, intervalMs = PUSH_SWEEP_INTERVAL_MS) {
  return await startPeriodic(ctx, "push sweeper", intervalMs, async () => await returnExpiredPushes(ctx));
}
