import { Elysia } from "elysia";
import { type JobName, type LeasedJob, type LeaseTimings, runLeasedJob } from "./cluster/leases.ts";
import { readiness } from "./cluster/readiness.ts";
import {
  announceReplica,
  forgetDeadLocalReplicas,
  type Replica,
  removeReplica,
  startHeartbeat,
  thisReplica,
} from "./cluster/replica.ts";
import { startRetention } from "./cluster/retention.ts";
import { clusterCalls } from "./cluster/routes.ts";
import { type AppContext, type ContextOptions, createContext } from "./context.ts";
import { type Db, openDatabase } from "./db/db.ts";
import { migrate } from "./db/migrate.ts";
import { writesFailing } from "./db/write-health.ts";
import { loadWebFiles, migrations, type WebFile } from "./embedded.ts";
import { agencyCalls } from "./modules/agency/routes.ts";
import { appleIdCalls } from "./modules/appleid/routes.ts";
import { auditCalls } from "./modules/audit/routes.ts";
import { channelCalls } from "./modules/channel/routes.ts";
import { comboCalls } from "./modules/combo/routes.ts";
import { couponCalls } from "./modules/coupon/routes.ts";
import { deviceCalls } from "./modules/device/routes.ts";
import { entryCalls } from "./modules/entry/routes.ts";
import { errorCalls } from "./modules/errors/routes.ts";
import { recordError } from "./modules/errors/service.ts";
import { feedbackCalls } from "./modules/feedback/routes.ts";
import { fileRoutes } from "./modules/file/routes.ts";
import { guideCalls, guideRoutes } from "./modules/guide/routes.ts";
import { lineCalls } from "./modules/line/routes.ts";
import { metricsRoutes } from "./modules/metrics/routes.ts";
import { nodeInstallRoutes, nodeRoutes } from "./modules/node-api/routes.ts";
import { startLatencyProbe } from "./modules/node-record/latency.ts";
import { agentCalls } from "./modules/node-record/routes.ts";
import { noticeCalls } from "./modules/notice/routes.ts";
import { orderCalls } from "./modules/order/routes.ts";
import { startOrderSweeper } from "./modules/order/sweeper.ts";
import { permissionCalls } from "./modules/permission/routes.ts";
import { prizeCalls } from "./modules/prize/routes.ts";
import { pushCalls } from "./modules/push/routes.ts";
import { startPushSweeper } from "./modules/push/service.ts";
import { settingsCalls } from "./modules/settings/routes.ts";
import { signUseCalls } from "./modules/signuse/routes.ts";
import { statsCalls } from "./modules/stats/routes.ts";
import { type BotTimings, startTelegramBot } from "./modules/telegram/bot.ts";
import { telegramCalls, telegramRoutes } from "./modules/telegram/routes.ts";
import { trafficAdminCalls } from "./modules/traffic/admin-routes.ts";
import { startReconcileScan } from "./modules/traffic/reconcile.ts";
import { trafficCalls } from "./modules/traffic/routes.ts";
import { startTrialSweeper } from "./modules/trial/sweeper.ts";
import { adminUserCalls } from "./modules/user/admin-routes.ts";
import { accountRoutes, userCalls } from "./modules/user/routes.ts";
import { NO_CHANNEL_CODE } from "./modules/user/schema.ts";
import { exchangeLoginToken } from "./modules/user/session.ts";
import { chargeAdminCalls, walletCalls } from "./modules/wallet/routes.ts";
import { webhookCalls } from "./modules/webhook/routes.ts";
import { startWebhookSender, type WebhookTimings } from "./modules/webhook/sender.ts";
import { startScheduledBackups } from "./ops/backup.ts";
import { claimPidFile } from "./ops/pid-file.ts";
import { paymentRoutes } from "./payments/routes.ts";
import { startUsdtWatcher } from "./payments/usdt-watcher.ts";
import { type CallDef, runCall, unknownCall } from "./rpc/call.ts";
import { COOKIE_DAYS, days, isHttps, parseCookies, serializeCookie } from "./rpc/cookies.ts";
import { recordArrival } from "./rpc/forwarded.ts";
import { keepAddress, requestView } from "./rpc/request-view.ts";
import { pagePolicy, secureResponse } from "./rpc/security-headers.ts";
import { subscriptionCalls } from "./subscription/calls.ts";
import { serveSubscription, subscriptionRoutes } from "./subscription/routes.ts";

/** Every envelope call of the product; each module contributes its list. */
const calls: CallDef[] = [
  ...userCalls,
  ...adminUserCalls,
  ...deviceCalls,
  ...settingsCalls,
  ...permissionCalls,
  ...noticeCalls,
  ...errorCalls,
  ...comboCalls,
  ...couponCalls,
  ...orderCalls,
  ...agentCalls,
  ...entryCalls,
  ...lineCalls,
  ...trafficCalls,
  ...trafficAdminCalls,
  ...agencyCalls,
  ...telegramCalls,
  ...feedbackCalls,
  ...appleIdCalls,
  ...guideCalls,
  ...pushCalls,
  ...prizeCalls,
  ...signUseCalls,
  ...statsCalls,
  ...channelCalls,
  ...walletCalls,
  ...chargeAdminCalls,
  ...subscriptionCalls,
  ...clusterCalls,
  ...auditCalls,
  ...webhookCalls,
];

/** Bun answers 413 above this; envelope calls have their own smaller limit (1000). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The client's address, behind trusted proxies the one they forwarded (rpc/forwarded.ts). */
const clientIp = (request: Request): string => requestView(request).ip;

type Handler = (request: Request) => Response | Promise<Response>;

/** The one "no such page": API paths in plain text, the rest in Chinese. */
function notFound(path: string): Response {
  return new Response(path.startsWith("/api/") ? "Not Found" : "页面不存在", { status: 404 });
}

/**
 * Whether every percent-escape in the path decodes to UTF-8. Elysia hands a route parameter that
 * does not (`%ff`, `%`, overlong `%c0%af`) to its handler as null; no such path names anything.
 */
function pathDecodes(url: string): boolean {
  if (!url.includes("%")) return true;
  try {
    decodeURIComponent(new URL(url).pathname);
    return true;
  } catch {
    return false;
  }
}

/**
 * What every request gets outside the router, once: its view (client address, https, host; only
 * trusted proxies are believed) recorded on arrival, a 404 for a path that does not decode (issue
 * 26, C7: before any route sees it), and the security headers on whatever answer leaves, 404s and
 * 500s included. Done around Elysia's fetch rather than as global hooks, which cost every call a
 * third more CPU.
 */
function guarded(app: AppContext, handle: Handler) {
  return (request: Request, server: { requestIP(request: Request): { address: string } | null }) => {
    const { https } = recordArrival(
      request,
      () => server.requestIP(request)?.address ?? "",
      app.trustedProxies,
    );
    const secure = (response: Response) => secureResponse(response, https);
    const answer = pathDecodes(request.url) ? handle(request) : notFound(new URL(request.url).pathname);
    return answer instanceof Promise ? answer.then(secure) : secure(answer);
  };
}

/** A route's unexpected error: a row in the error log under the route as registered, and a 500. */
async function routeFailure(
  app: AppContext,
  method: string,
  route: string,
  error: unknown,
): Promise<Response> {
  // The source is the route as registered, never the path asked for: each path a stranger
  // makes up would otherwise be a source of its own with its own budget (errors/service.ts).
  await recordError(app.db, `${method} ${route || "(no route)"}`, error);
  return new Response("服务器内部错误", { status: 500 });
}

const SUBSCRIPTION_ROUTE = "/api/subscript/:client/:userId/:userkey";
/** The query of a fetch without one, shared: a subscription only reads its query. */
const NO_QUERY = new URLSearchParams();
/**
 * A subscription path of letters, digits, `_` and `-` only: the router would hand these segments
 * over as they are, and a URL parser would keep the path as it is.
 */
const PLAIN_SUBSCRIPTION_PATH = /^\/api\/subscript\/([\w-]+)\/([\w-]+)\/([\w-]+)$/;

/**
 * The two hot paths answered before Elysia's router, which costs each request a few µs (issue 31
 * profile): an envelope call by its exact path, and a subscription fetch whose path has no escape
 * and nothing after the key. The handlers are the router's own; any other request, and any path
 * these do not match exactly, goes to the router as before.
 */
function hotRoutes(
  app: AppContext,
  router: { fetch(request: Request): Response | Promise<Response> },
): Handler {
  const callsByPath = new Map(calls.map((def) => [def.path, def]));
  return (request) => {
    const url = request.url;
    const start = url.indexOf("/", 11);
    const queryAt = url.indexOf("?", start);
    const path = queryAt === -1 ? url.slice(start) : url.slice(start, queryAt);
    if (request.method === "POST") {
      const def = callsByPath.get(path);
      if (def) {
        return runCall(app, def, request, clientIp(request)).catch((error) =>
          routeFailure(app, "POST", def.path, error),
        );
      }
    } else if (request.method === "GET" && path.startsWith("/api/subscript/")) {
      const plain = PLAIN_SUBSCRIPTION_PATH.exec(path);
      if (plain) {
        const [, client = "", userId = "", userkey = ""] = plain;
        // Without a query string the path is all a URL parser would give back.
        const requested =
          queryAt === -1 ? { pathname: path, search: "", searchParams: NO_QUERY } : new URL(url);
        try {
          const answer = serveSubscription(app, request, { client, userId, userkey }, requested);
          return answer instanceof Promise
            ? answer.catch((error) => routeFailure(app, "GET", SUBSCRIPTION_ROUTE, error))
            : answer;
        } catch (error) {
          return routeFailure(app, "GET", SUBSCRIPTION_ROUTE, error);
        }
      }
    }
    keepAddress(request);
    return router.fetch(request);
  };
}

const filePolicies = new WeakMap<WebFile, string>();

/** An embedded HTML page's policy: its own inline styles allowed by hash, computed once. */
function filePolicy(file: WebFile): string {
  let policy = filePolicies.get(file);
  if (policy === undefined) {
    policy = pagePolicy(new TextDecoder().decode(file.bytes));
    filePolicies.set(file, policy);
  }
  return policy;
}

function serveFile(file: WebFile, request: Request, extraHeaders?: Headers): Response {
  const headers = extraHeaders ?? new Headers();
  headers.set("content-type", file.type);
  headers.set("etag", file.etag);
  headers.set("cache-control", "no-cache");
  if (file.type.startsWith("text/html")) headers.set("content-security-policy", filePolicy(file));
  headers.set("vary", "accept-encoding");
  if (request.headers.get("if-none-match") === file.etag) return new Response(null, { status: 304, headers });
  if (request.headers.get("accept-encoding")?.includes("gzip")) {
    headers.set("content-encoding", "gzip");
    return new Response(file.gzip(), { headers });
  }
  return new Response(file.bytes, { headers });
}

/**
 * The SPA entry. `?token=` is taken out of the URL; when it is a login link the server minted
 * (mintLoginLink) it is used up for a fresh session cookie, and any other value is ignored, so a
 * link cannot put a visitor into a session someone else chose. `?c=` (or its absence) sets the
 * channel_code cookie as seed 000 §4 describes.
 */
async function serveIndex(app: AppContext, index: WebFile, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const cookies = parseCookies(request.headers.get("cookie"));
  const secure = isHttps(request);
  const headers = new Headers();
  const channel = url.searchParams.get("c")?.replace(/\/$/, "");
  if (channel && !cookies.channel_code) {
    headers.append(
      "set-cookie",
      serializeCookie("channel_code", channel.slice(0, 64), {
        maxAgeSeconds: days(COOKIE_DAYS.channel),
        secure,
      }),
    );
  } else if (!channel && !cookies.channel_code) {
    headers.append(
      "set-cookie",
      serializeCookie("channel_code", NO_CHANNEL_CODE, {
        maxAgeSeconds: days(COOKIE_DAYS.channelDefault),
        secure,
      }),
    );
  }
  const token = url.searchParams.get("token")?.replace(/\/$/, "");
  if (token !== undefined) {
    const userAgent = request.headers.get("user-agent") ?? "";
    const session = await exchangeLoginToken(app, token, requestView(request).ip, userAgent);
    if (session) {
      headers.append(
        "set-cookie",
        serializeCookie("token", session, { httpOnly: true, maxAgeSeconds: days(COOKIE_DAYS.token), secure }),
      );
    }
    url.searchParams.delete("token");
    headers.set("location", `${url.pathname}${url.search}${url.hash}`);
    headers.set("cache-control", "no-store");
    return new Response(null, { status: 302, headers });
  }
  return serveFile(index, request, headers);
}

/**
 * `/healthz`: "ok", or, while the latest write failed for lack of storage (until one goes through
 * again), 503 with what is failing, so a monitor can alert; reads are still answered meanwhile.
 */
function healthAnswer(app: AppContext): Response {
  const failing = writesFailing(app.db);
  if (!failing) return new Response("ok");
  // What failed where goes to stderr only: /healthz answers anyone.
  const { code, meaning, since, failures } = failing;
  return Response.json(
    { status: "writes failing", cause: code, meaning, since: new Date(since).toISOString(), failures },
    { status: 503, headers: { "cache-control": "no-store" } },
  );
}

/** What the server's fetch runs for a request once started: the hot paths, then the router. */
export function buildHandler(app: AppContext): Handler {
  return hotRoutes(app, buildApp(app));
}

export function buildApp(app: AppContext) {
  const webFiles = loadWebFiles();
  const index = webFiles.get("/index.html");
  const callRouter = new Elysia();
  for (const def of calls) {
    callRouter.post(def.path, ({ request }) => runCall(app, def, request, clientIp(request)), {
      parse: "none",
    });
  }
  return new Elysia()
    .onError(async ({ code, error, request, path, route }) => {
      if (code === "NOT_FOUND") return notFound(path);
      return await routeFailure(app, request.method, route, error);
    })
    .get("/healthz", () => healthAnswer(app))
    .get("/readyz", async () => await readiness(app.db, migrations.at(-1)?.version ?? 0))
    .use(metricsRoutes(app))
    .use(accountRoutes(app))
    .use(paymentRoutes(app))
    .use(subscriptionRoutes(app))
    .use(nodeRoutes(app))
    .use(nodeInstallRoutes(app))
    .use(telegramRoutes(app))
    .use(fileRoutes(app))
    .use(guideRoutes(app))
    .use(callRouter)
    .post("/api/*", async ({ request, path }) => await unknownCall(app, request, path), { parse: "none" })
    .get("/", async ({ request }) =>
      index ? await serveIndex(app, index, request) : new Response("SPA not built", { status: 500 }),
    )
    .get("/*", ({ request, path }) => {
      const file = webFiles.get(path);
      if (!file || path === "/index.html") return notFound(path);
      return serveFile(file, request);
    });
}

export interface ServeOptions extends ContextOptions {
  dataDir: string;
  /** postgres://… to run on PostgreSQL; unset: SQLite at <dataDir>/ferry.db. */
  databaseUrl?: string;
  host?: string;
  port?: number;
  /** The Telegram bot's loop intervals; tests make them short. */
  telegram?: Partial<BotTimings>;
  /** How often the scheduled backup checks whether it is due (ops/backup.ts). */
  backupCheckMs?: number;
  /** The leases' timings (cluster/leases.ts); tests make them short. */
  leases?: Partial<LeaseTimings>;
  /** The webhook sender's poll, timeout, backoff and give-up timings (modules/webhook/sender.ts); tests make them short. */
  webhooks?: Partial<WebhookTimings>;
  /** How often this replica renews its `last_seen` (cluster/replica.ts). */
  heartbeatMs?: number;
  /** How often the reconcile-scan job looks for diverging days to tell the admins (modules/traffic/reconcile.ts). */
  reconcileScanMs?: number;
}

export interface RunningServer {
  url: string;
  port: number;
  context: AppContext;
  /** This process as a replica (its row in `replicas`, the holder name of its leases). */
  replica: Replica;
  /** Graceful stop; requests still running after drainMs are cut. */
  stop(drainMs?: number): Promise<void>;
}

/**
 * The background jobs, each under its lease (cluster/leases.ts): it runs on one replica at a time
 * and only while that replica holds the lease. metrics-gauges runs nothing: holding it makes this
 * replica's /metrics report the database-wide gauges (modules/metrics/service.ts).
 */
function startLeasedJobs(context: AppContext, replica: Replica, options: ServeOptions): LeasedJob[] {
  const idle = () => ({ async stop() {} });
  const jobs: [JobName, Parameters<typeof runLeasedJob>[3]][] = [
    ["usdt-watcher", () => startUsdtWatcher(context)],
    ["telegram-bot", () => startTelegramBot(context, options.telegram)],
    ["trial-sweeper", () => startTrialSweeper(context)],
    ["push-sweeper", () => startPushSweeper(context)],
    ["order-sweeper", () => startOrderSweeper(context)],
    ["latency-probe", () => startLatencyProbe(context)],
    [
      "scheduled-backup",
      () => startScheduledBackups(context, options.dataDir, options.backupCheckMs, Date.now, replica),
    ],
    ["retention", () => startRetention(context)],
    ["metrics-gauges", idle],
    ["webhook-sender", (signal) => startWebhookSender(context, options.webhooks, signal)],
    ["reconcile-scan", () => startReconcileScan(context, options.reconcileScanMs)],
  ];
  return jobs.map(([job, start]) => runLeasedJob(context, replica, job, start, options.leases));
}

/**
 * Takes the port, then opens `<data>/ferry.db` (or PostgreSQL), applies migrations (refusing a
 * newer database), registers this replica and starts answering; each background job starts once
 * its lease is won (on SQLite, at once). The port comes first so a second `ferry serve` on a taken
 * port fails before it touches any database (it might be the running server's, and a newer build
 * would migrate it underneath that server).
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const server = Bun.serve({
    hostname: options.host ?? "127.0.0.1",
    port: options.port ?? 3000,
    // A taken port must fail (EADDRINUSE), never be shared with another process and its database.
    reusePort: false,
    maxRequestBodySize: MAX_BODY_BYTES,
    // /healthz and /readyz too: not ready (nor, for a liveness probe, known healthy) until migrated.
    fetch: () => new Response("starting", { status: 503, headers: { "retry-after": "1" } }),
  });
  const port = server.port ?? options.port ?? 3000;
  const replica = thisReplica(port);
  let db: Db | undefined;
  let context: AppContext;
  try {
    db = await openDatabase({ url: options.databaseUrl, file: `${options.dataDir}/ferry.db` });
    await migrate(db, migrations);
    context = createContext(db, options);
    await forgetDeadLocalReplicas(db, replica.host);
    await announceReplica(db, replica);
    server.reload({ fetch: guarded(context, buildHandler(context)) });
  } catch (error) {
    server.stop(true);
    await db?.close();
    throw error;
  }
  const heartbeat = startHeartbeat(context, replica, options.heartbeatMs);
  const jobs = startLeasedJobs(context, replica, options);
  await Promise.all(jobs.map((job) => job.ready));
  // The pid file guards a SQLite file against `ferry restore`; replicas on PostgreSQL may share a
  // data folder on one machine, and a restore there does not look for it.
  const releasePidFile = db.engine === "sqlite" ? claimPidFile(options.dataDir) : () => {};
  // Start-up is over: requests get the normal JIT again (scripts/build.ts starts it lazier).
  Bun.unsafe.setJITPolicy(1);
  // Listening on all addresses, this machine reaches the server over loopback.
  const loopback = options.host === "::" ? "::1" : "127.0.0.1";
  const host = !options.host || options.host === "0.0.0.0" || options.host === "::" ? loopback : options.host;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    context,
    replica,
    /**
     * Graceful: stops accepting, lets the requests in flight finish (up to drainMs, then cuts
     * them), stops the background jobs and releases their leases, removes this replica's row,
     * checkpoints the WAL into ferry.db and closes it.
     */
    async stop(drainMs = 8_000) {
      let drained: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        server.stop(false),
        new Promise((done) => {
          drained = setTimeout(done, drainMs);
        }),
      ]);
      clearTimeout(drained);
      await server.stop(true);
      await Promise.all(jobs.map((job) => job.stop()));
      await heartbeat.stop();
      await removeReplica(context.db, replica.id).catch(() => {
        // The database is away: the row ages out (离线, then the retention job).
      });
      context.mailer.close();
      try {
        if (context.db.engine === "sqlite") await context.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch (error) {
        // Disk full, say: nothing is lost, the next start reads the writes from ferry.db-wal.
        console.error(
          `error: WAL checkpoint at stop failed (${(error as { code?: string }).code ?? "error"}: ` +
            `${(error as Error).message}); the writes stay in ferry.db-wal and the next start reads them`,
        );
      }
      await context.db.close();
      releasePidFile();
    },
  };
}
