/**
 * What a node may report on `push` and `alive` (issue 11 §4, §6). A body is checked whole, on its
 * text, before anything of it is used: it is taken whole or refused whole.
 *
 * - Bodies: at most NODE_BODY_MAX_BYTES (4 MiB), read no further. A push for 100 000 users is
 *   about 3.5 MB; our agent sends one per inbound and interval.
 * - User ids (the object's keys): the decimal digits of a positive safe integer as the integer
 *   itself prints them — "8", never "08", "+8", "8.0", " 8" or "\u0038" — and each user once. A
 *   duplicate JSON key is refused (JSON.parse would silently keep the last one).
 * - push `{user: [upload, download]}`: non-negative safe integers; per user and per report at most
 *   REPORT_MAX_BYTES = 100 Gbit/s for the longest push interval the settings allow (86 400 s),
 *   1.08 × 10^15 bytes: more than any node can move between two pushes, and far enough below
 *   2^53 that no sum of one report loses precision.
 * - alive `{user: [ip, …]}`: at most ALIVE_MAX_USERS (10 000) users, each IP text of at most 64
 *   characters. Of one user's IPs only the first ALIVE_MAX_IPS (8) are kept: plans sell device
 *   limits of a few devices, so 8 still trips any of them, and an account shared by many people
 *   cannot get its node's whole report refused.
 *
 * Pure functions with no database: the agent uses the same limits for what it sends.
 */

export const NODE_BODY_MAX_BYTES = 4 * 1024 * 1024;

/** 100 Gbit/s (12.5 GB/s) for 86 400 s, the longest trafficStasticDuration. */
export const REPORT_MAX_BYTES = 12_500_000_000 * 86_400;

export const ALIVE_MAX_USERS = 10_000;
export const ALIVE_MAX_IPS = 8;
const IP_MAX_LENGTH = 64;

/** userNo → [upload, download] of a push that passed every check. */
export type PushUsage = Map<number, [upload: number, download: number]>;

/** userNo → the IPs as reported, of an alive report that passed every check. */
export type AliveReport = Map<number, string[]>;

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const refuse = (message: string): { ok: false; message: string } => ({ ok: false, message });

const USER_NO = /^[1-9][0-9]{0,15}$/;

/** A user id as the node API writes it: the integer's own digits ("8", not "08" or "8.0"). */
export function isUserNo(text: string): boolean {
  return USER_NO.test(text) && Number.isSafeInteger(Number(text));
}

const QUOTE = 34; // "
const BACKSLASH = 92; // \
const COMMA = 44; // ,
const OPEN_OBJECT = 123; // {
const OPEN_ARRAY = 91; // [
const CLOSE_OBJECT = 125; // }
const CLOSE_ARRAY = 93; // ]

/** The keys of the top-level object of valid JSON exactly as written (escapes not decoded), in order. */
function rawTopLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      while (text.charCodeAt(end) !== QUOTE) end += text.charCodeAt(end) === BACKSLASH ? 2 : 1;
      if (depth === 1 && expectKey) keys.push(text.slice(i + 1, end));
      expectKey = false;
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth += 1;
      expectKey = depth === 1;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth -= 1;
    } else if (c === COMMA && depth === 1) {
      expectKey = true;
    }
  }
  return keys;
}

const quoted = (text: string) => JSON.stringify(text.length > 24 ? `${text.slice(0, 24)}…` : text);

/** The body's entries by user id, in the order written; refused unless every key is a user id, once. */
function userEntries(text: string): Checked<[number, unknown][]> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refuse("body is not JSON");
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    return refuse('body must be a JSON object {"<user id>": …}');
  }
  const values = body as Record<string, unknown>;
  const entries: [number, unknown][] = [];
  const seen = new Set<string>();
  for (const key of rawTopLevelKeys(text)) {
    if (!isUserNo(key))
      return refuse(`${quoted(key)} is not a user id: write the integer's own digits, e.g. "8"`);
    if (seen.has(key)) return refuse(`user ${key} appears more than once`);
    seen.add(key);
    entries.push([Number(key), values[key]]);
  }
  return { ok: true, value: entries };
}

const isByteCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/** A push body `{"<user id>": [upload, download], …}`, checked whole. */
export function checkPush(text: string): Checked<PushUsage> {
  const entries = userEntries(text);
  if (!entries.ok) return entries;
  const usage: PushUsage = new Map();
  let total = 0;
  for (const [userNo, value] of entries.value) {
    if (!Array.isArray(value) || value.length !== 2 || !isByteCount(value[0]) || !isByteCount(value[1])) {
      return refuse(`user ${userNo}: bytes must be [upload, download], two non-negative integers`);
    }
    const [upload, download] = value as [number, number];
    const bytes = upload + download;
    if (bytes > REPORT_MAX_BYTES) {
      return refuse(`user ${userNo}: ${bytes} bytes; a report carries at most ${REPORT_MAX_BYTES} per user`);
    }
    total += bytes;
    if (total > REPORT_MAX_BYTES) {
      return refuse(`the report carries more than ${REPORT_MAX_BYTES} bytes in all; at most that per report`);
    }
    usage.set(userNo, [upload, download]);
  }
  return { ok: true, value: usage };
}

/** An alive body `{"<user id>": ["ip", …], …}`, checked whole. */
export function checkAlive(text: string): Checked<AliveReport> {
  const entries = userEntries(text);
  if (!entries.ok) return entries;
  if (entries.value.length > ALIVE_MAX_USERS) {
    return refuse(`${entries.value.length} users; an alive report names at most ${ALIVE_MAX_USERS}`);
  }
  const report: AliveReport = new Map();
  for (const [userNo, ips] of entries.value) {
    if (!Array.isArray(ips)) return refuse(`user ${userNo}: IPs must be a list`);
    if (!ips.every((ip) => typeof ip === "string" && ip.length > 0 && ip.length <= IP_MAX_LENGTH)) {
      return refuse(`user ${userNo}: each IP must be text of at most ${IP_MAX_LENGTH} characters`);
    }
    report.set(userNo, (ips as string[]).slice(0, ALIVE_MAX_IPS));
  }
  return { ok: true, value: report };
}
