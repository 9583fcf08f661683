/**
 * Online IPs per user from the core's access log (node-protocol.md §3), for the `alive` report:
 *   2026/11/21 13:03:32 127.0.0.1:36516 accepted tcp:127.0.0.1:18080 [direct] email: vmesh_tcp|2
 * The log is read from where the last read stopped and emptied once it grows large (the core
 * appends, so it carries on at the new end).
 */
import { closeSync, existsSync, openSync, readSync, statSync, truncateSync } from "node:fs";
import { ALIVE_MAX_IPS, ALIVE_MAX_USERS, isUserNo } from "../modules/node-api/report.ts";

const LINE = / (?:tcp:|udp:)?(\[[0-9a-fA-F:.]+\]|[0-9.]+):\d+ accepted .* email: (\S+)$/;
const TRUNCATE_AT_BYTES = 1024 * 1024;
const MAX_READ_BYTES = 4 * 1024 * 1024;

/** userNo → distinct source IPs. */
export type OnlineIps = Record<string, string[]>;

/** Within the panel's alive limits (node/report.ts): ALIVE_MAX_USERS users, ALIVE_MAX_IPS IPs each. */
export function parseAccessLog(text: string): OnlineIps {
  let users = 0;
  const online: OnlineIps = {};
  for (const line of text.split("\n")) {
    const match = LINE.exec(line.trimEnd());
    if (!match?.[1] || !match[2]) continue;
    const email = match[2];
    const userNo = email.slice(email.lastIndexOf("|") + 1);
    if (!isUserNo(userNo)) continue;
    const ip = match[1].replace(/^\[|\]$/g, "");
    let ips = online[userNo];
    if (!ips) {
      if (users >= ALIVE_MAX_USERS) continue;
      users += 1;
      ips = [];
      online[userNo] = ips;
    }
    if (ips.length < ALIVE_MAX_IPS && !ips.includes(ip)) ips.push(ip);
  }
  return online;
}

export class AccessLogTail {
  private offset: number;

  /** Starts at the log's current end: what came before belongs to an earlier run. */
  constructor(readonly file: string) {
    this.offset = existsSync(file) ? statSync(file).size : 0;
  }

  /** Online IPs in the lines written since the last call. */
  read(): OnlineIps {
    if (!existsSync(this.file)) return {};
    const size = statSync(this.file).size;
    if (size < this.offset) this.offset = 0; // emptied by someone else
    const length = Math.min(size - this.offset, MAX_READ_BYTES);
    if (length <= 0) return {};
    const buffer = Buffer.alloc(length);
    const fd = openSync(this.file, "r");
    try {
      readSync(fd, buffer, 0, length, this.offset);
    } finally {
      closeSync(fd);
    }
    // Only whole lines; a partly written last line is read next time.
    const end = buffer.lastIndexOf(10) + 1;
    this.offset += end;
    const online = parseAccessLog(buffer.subarray(0, end).toString("utf8"));
    if (this.offset >= TRUNCATE_AT_BYTES && this.offset === size) {
      truncateSync(this.file, 0);
      this.offset = 0;
    }
    return online;
  }
}
