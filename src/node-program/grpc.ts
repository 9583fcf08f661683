/**
 * The proxy core's gRPC API (node-protocol.md §3) without a gRPC library: a unary call is an
 * HTTP/2 POST to /<package>.<Service>/<Method> with a 5-byte length prefix before the protobuf
 * body; the status comes back in the trailers. v2ray 4.x names its packages `v2ray.core.…`,
 * xray `xray.…`; the messages and field numbers are the same.
 *   StatsService.QueryStats{pattern, reset} → stats {name, value}
 *   HandlerService.AlterInbound{tag, AddUserOperation{User{level, email, account}} | RemoveUserOperation{email}}
 */
import http2 from "node:http2";
import type { CoreDialect } from "./core-config.ts";
import { ProtoWriter, readFields, readString } from "./proto.ts";

/** google.protobuf.Any's v2ray cousin: a message and its full type name. */
export interface TypedMessage {
  type: string;
  value: Uint8Array;
}

export interface CoreApiUser {
  email: string;
  level: number;
  account: TypedMessage;
}

export interface Stat {
  name: string;
  value: number;
}

/** A call the core answered with a non-zero grpc-status (2 = UNKNOWN carries v2ray's own errors). */
export class GrpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const PACKAGE_PREFIX: Record<CoreDialect, string> = { v2ray: "v2ray.core.", xray: "xray." };

/** A message's full name in a dialect, e.g. `proxy.vmess.Account` → `v2ray.core.proxy.vmess.Account`. */
export const coreTypeName = (dialect: CoreDialect, name: string) => PACKAGE_PREFIX[dialect] + name;

const typed = (message: TypedMessage) =>
  new ProtoWriter().string(1, message.type).bytesField(2, message.value);

export class CoreApi {
  private session: http2.ClientHttp2Session | null = null;

  constructor(
    readonly address: string,
    readonly dialect: CoreDialect,
    private readonly timeoutMs = 5_000,
  ) {}

  typeName(name: string): string {
    return coreTypeName(this.dialect, name);
  }

  /** Per-counter values whose name contains `pattern`; `reset` zeroes them in the same step. */
  async queryStats(pattern: string, reset: boolean): Promise<Stat[]> {
    const request = new ProtoWriter().string(1, pattern).varint(2, reset);
    const answer = await this.unary("app.stats.command.StatsService", "QueryStats", request.finish());
    const stats: Stat[] = [];
    for (const stat of readFields(answer)) {
      if (stat.field !== 1 || !("bytes" in stat)) continue;
      let name = "";
      let value = 0n; // proto3 leaves zero out
      for (const part of readFields(stat.bytes)) {
        if (part.field === 1 && "bytes" in part) name = readString(part.bytes);
        if (part.field === 2 && "varint" in part) value = BigInt.asIntN(64, part.varint);
      }
      stats.push({ name, value: Number(value) });
    }
    return stats;
  }

  async addUser(tag: string, user: CoreApiUser): Promise<void> {
    const protoUser = new ProtoWriter()
      .varint(1, user.level)
      .string(2, user.email)
      .message(3, typed(user.account));
    const operation = {
      type: this.typeName("app.proxyman.command.AddUserOperation"),
      value: new ProtoWriter().message(1, protoUser).finish(),
    };
    await this.alterInbound(tag, operation);
  }

  async removeUser(tag: string, email: string): Promise<void> {
    const operation = {
      type: this.typeName("app.proxyman.command.RemoveUserOperation"),
      value: new ProtoWriter().string(1, email).finish(),
    };
    await this.alterInbound(tag, operation);
  }

  close() {
    this.session?.close();
    this.session = null;
  }

  private async alterInbound(tag: string, operation: TypedMessage) {
    const request = new ProtoWriter().string(1, tag).message(2, typed(operation));
    await this.unary("app.proxyman.command.HandlerService", "AlterInbound", request.finish());
  }

  private connect(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const session = http2.connect(`http://${this.address}`);
    // A broken session is dropped; the next call dials again (the core may have restarted).
    const forget = () => {
      if (this.session === session) this.session = null;
    };
    session.on("error", forget);
    session.on("close", forget);
    session.on("goaway", forget);
    this.session = session;
    return session;
  }

  private unary(service: string, method: string, message: Uint8Array): Promise<Uint8Array> {
    const path = `/${this.typeName(service)}/${method}`;
    return new Promise((resolve, reject) => {
      const session = this.connect();
      const frame = new Uint8Array(5 + message.length);
      new DataView(frame.buffer).setUint32(1, message.length); // byte 0: not compressed
      frame.set(message, 5);
      const call = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
      });
      const chunks: Buffer[] = [];
      let status: string | undefined;
      let statusMessage = "";
      let settled = false;
      const finish = (error: Error | null, body?: Uint8Array) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(body ?? new Uint8Array());
      };
      const timer = setTimeout(() => {
        call.close(http2.constants.NGHTTP2_CANCEL);
        session.destroy();
        finish(new Error(`${path}: no answer from ${this.address} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const takeStatus = (headers: http2.IncomingHttpHeaders) => {
        if (headers["grpc-status"] === undefined) return;
        status = String(headers["grpc-status"]);
        statusMessage = decodeURIComponent(String(headers["grpc-message"] ?? ""));
      };
      // A Trailers-Only error answer carries grpc-status in the headers.
      call.on("response", takeStatus);
      call.on("trailers", takeStatus);
      call.on("data", (chunk: Buffer) => chunks.push(chunk));
      call.on("error", (error) => finish(error));
      call.on("end", () => {
        if (status !== "0") {
          finish(new GrpcError(Number(status ?? 2), `${path}: ${statusMessage || `grpc-status ${status}`}`));
          return;
        }
        const body = Buffer.concat(chunks);
        if (body.length < 5) return finish(null, new Uint8Array());
        const length = body.readUInt32BE(1);
        finish(null, new Uint8Array(body.subarray(5, 5 + length)));
      });
      call.end(frame);
    });
  }
}
