/**
 * A fake TronGrid on 127.0.0.1 serving `GET /v1/accounts/{address}/transactions/trc20` with the
 * real JSON shape (payments.md §5): `{success, data:[…], meta:{at, page_size, fingerprint?}}`,
 * newest first, honouring only_to / only_confirmed / contract_address / min_timestamp /
 * max_timestamp / limit and paging by `fingerprint`. Tests add transfers, including the ones a
 * watcher must refuse (a fake "USDT" token of another contract, an Approval, another recipient).
 * With `ignoreFilters` it drops the address and contract filters (still listing only confirmed
 * transfers in the time range), as a careless TronGrid-compatible proxy might, so the watcher's own
 * checks are what decides.
 */
import { randomBytes } from "node:crypto";

export const USDT_CONTRACT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
export const FAKE_USDT_CONTRACT = "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj";

export interface TronTransfer {
  transaction_id: string;
  token_info: { symbol: string; address: string; decimals: number; name: string };
  block_timestamp: number;
  from: string;
  to: string;
  type: "Transfer" | "Approval";
  value: string;
}

export interface StoredTransfer extends TronTransfer {
  confirmed: boolean;
}

export interface TronGridRequest {
  address: string;
  query: URLSearchParams;
  apiKey: string | null;
}

export interface FakeTronGrid {
  url: string;
  requests: TronGridRequest[];
  transfers: StoredTransfer[];
  /** Largest page served whatever `limit` asks (small values force fingerprint paging). */
  maxPageSize: number;
  /** List transfers of any address and any contract (see the file comment). */
  ignoreFilters: boolean;
  /** Answer the next n requests with this HTTP status (403/429/503 throttling). */
  failNext(status: number, times?: number): void;
  /** Adds a transfer (defaults: a confirmed USDT Transfer now) and returns it. */
  addTransfer(
    transfer: Partial<TronTransfer> & { to: string; value: string; confirmed?: boolean },
  ): StoredTransfer;
  close(): Promise<void>;
}

export const randomTxId = () => randomBytes(32).toString("hex");

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/** A random string shaped like a TRON base58 address (T + 33 base58 characters). */
export function randomTronAddress(): string {
  return `T${Array.from(randomBytes(33), (b) => BASE58[b % BASE58.length]).join("")}`;
}

const PAGE_PATH = /^\/v1\/accounts\/([^/]+)\/transactions\/trc20$/;

export function startFakeTronGrid(): FakeTronGrid {
  const requests: TronGridRequest[] = [];
  const transfers: StoredTransfer[] = [];
  const failures: number[] = [];
  const grid = {} as FakeTronGrid;

  function select(address: string, query: URLSearchParams): StoredTransfer[] {
    const onlyTo = query.get("only_to") === "true";
    const onlyFrom = query.get("only_from") === "true";
    const onlyConfirmed = query.get("only_confirmed") === "true";
    const contract = query.get("contract_address");
    const min = Number(query.get("min_timestamp") ?? 0);
    const max = Number(query.get("max_timestamp") ?? Number.MAX_SAFE_INTEGER);
    const involves = (t: StoredTransfer) =>
      onlyTo ? t.to === address : onlyFrom ? t.from === address : t.to === address || t.from === address;
    return transfers
      .filter(
        (t) =>
          (!onlyConfirmed || t.confirmed) &&
          t.block_timestamp >= min &&
          t.block_timestamp <= max &&
          (grid.ignoreFilters || (involves(t) && (!contract || t.token_info.address === contract))),
      )
      .sort((a, b) => b.block_timestamp - a.block_timestamp);
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const url = new URL(request.url);
      const match = PAGE_PATH.exec(url.pathname);
      if (!match || request.method !== "GET") return new Response("Not Found", { status: 404 });
      const address = decodeURIComponent(match[1] ?? "");
      requests.push({ address, query: url.searchParams, apiKey: request.headers.get("tron-pro-api-key") });
      const failure = failures.shift();
      if (failure !== undefined) {
        return Response.json(
          {
            success: false,
            error: "request rate exceeded the allowed_rps(3), and the query server is suspended for 30s",
            statusCode: failure,
          },
          { status: failure },
        );
      }
      const limit = Math.min(Number(url.searchParams.get("limit") ?? 20) || 20, 200, grid.maxPageSize);
      const all = select(address, url.searchParams);
      const fingerprint = url.searchParams.get("fingerprint");
      const offset = fingerprint
        ? Number(Buffer.from(fingerprint, "base64url").toString("utf8").split(":")[1])
        : 0;
      const page = all.slice(offset, offset + limit).map(({ confirmed: _confirmed, ...item }) => item);
      const meta: Record<string, unknown> = { at: Date.now(), page_size: page.length };
      if (offset + limit < all.length) {
        meta.fingerprint = Buffer.from(`page:${offset + limit}:${randomBytes(4).toString("hex")}`).toString(
          "base64url",
        );
        const next = new URL(url);
        next.searchParams.set("fingerprint", meta.fingerprint as string);
        meta.links = { next: next.toString() };
      }
      return Response.json({ data: page, success: true, meta });
    },
  });

  Object.assign(grid, {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    transfers,
    maxPageSize: 200,
    ignoreFilters: false,
    failNext(status: number, times = 1) {
      for (let i = 0; i < times; i += 1) failures.push(status);
    },
    addTransfer(transfer: Partial<TronTransfer> & { to: string; value: string; confirmed?: boolean }) {
      const stored: StoredTransfer = {
        transaction_id: randomTxId(),
        token_info: { symbol: "USDT", address: USDT_CONTRACT, decimals: 6, name: "Tether USD" },
        block_timestamp: Date.now(),
        from: randomTronAddress(),
        type: "Transfer",
        confirmed: true,
        ...transfer,
      };
      transfers.push(stored);
      return stored;
    },
    async close() {
      await server.stop(true);
    },
  });
  return grid;
}
