/**
 * Subscription links and the files around them (seed 000 §7, DESIGN §5: not enveloped).
 *   GET /api/subscript/{client}/{userId}/{userkey}   the file a client app imports
 *   GET /user/getUserAllURL?type=ssr                 the logged-in user's share links, one a line, or
 *                                                    in words why there are none
 *   GET /describe/ss_rule.conf, /describe/q.filter   rule files for Shadowrocket and Quantumult
 *   GET /country/country.json                        the node form's country list
 */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { refreshDataVersion } from "../db/read-cache.ts";
import type { Admission } from "../modules/device/service.ts";
import { COUNTRIES } from "../modules/node-record/countries.ts";
import { resolveSession } from "../modules/user/session.ts";
import { requestOrigin, sessionToken } from "../rpc/call.ts";
import { keepAddress } from "../rpc/request-view.ts";
import { markSecured } from "../rpc/security-headers.ts";
import { formatFor, isClient } from "./clients.ts";
import { admitFetch, admittedHeaders, isRefused, refusedAnswer } from "./device-gate.ts";
import type { Format } from "./model.ts";
import { quantumultFilter, shadowrocketRules } from "./rules.ts";
import { type ServedSubscription, servedSubscription } from "./served.ts";
import {
  Notice,
  renderSubscription,
  SITE_TITLE,
  type SubscriptionRequest,
  subscriptionHeaders,
  titleFor,
  userForSubscription,
} from "./service.ts";
import { dialectForFetch, INVALID_VERSION_MESSAGE } from "./singbox-version.ts";

const notFound = () => new Response(null, { status: 404 });

/** `?version=` that is no sing-box version: said, not guessed at (issue 29). */
const badVersion = () =>
  new Response(`${INVALID_VERSION_MESSAGE}\n`, {
    status: 400,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });

/** The parts of the URL asked for that a subscription reads (a URL, or the server's hot path's own). */
export type RequestedPath = Pick<URL, "pathname" | "search" | "searchParams">;

/** The file's URL as the client sees it (behind a trusted proxy, the public origin). */
function publicUrl(request: Request, url: RequestedPath): string {
  return `${requestOrigin(request)}${url.pathname}${url.search}`;
}

export function subscriptionRoutes(app: AppContext) {
  return new Elysia()
    .get("/api/subscript/:client/:userId/:userkey", ({ params, request }) =>
      serveSubscription(app, request, params, new URL(request.url)),
    )
    .get("/user/getUserAllURL", async ({ request }) => {
      const user = await resolveSession(app, sessionToken(request));
      if (!user) return new Response(null, { status: 302, headers: { location: "/#/login" } });
      const requested = new URL(request.url);
      const type = requested.searchParams.get("type");
      const format: Format = type === "ssr" ? "ssr" : "v2ray";
      const file = await renderSubscription(app, user, {
        format,
        url: publicUrl(request, requested),
        title: SITE_TITLE,
        query: new URLSearchParams({ base64: "0" }),
        headerLines: false,
      });
      // A person reads this page: a placeholder link would only mislead, so the reason is said.
      const body = file.notice === null ? file.body : `${listingNotice(format, file.notice)}\n`;
      return new Response(body, {
        headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "private, no-store" },
      });
    })
    .get("/describe/ss_rule.conf", async ({ request }) =>
      ruleFile(shadowrocketRules(await describeHost(app, request))),
    )
    .get("/describe/q.filter", async ({ request }) =>
      ruleFile(quantumultFilter(await describeHost(app, request))),
    )
    .get("/country/country.json", () =>
      Response.json(COUNTRIES, { headers: { "cache-control": "public, max-age=86400" } }),
    );
}

/**
 * `GET /api/subscript/{client}/{userId}/{userkey}`: the file from the cache or rendered, after the
 * device gate. Answered at once, not as a promise, when the cache and the gate need no read.
 */
export function serveSubscription(
  app: AppContext,
  request: Request,
  params: { client: string; userId: string; userkey: string },
  requested: RequestedPath,
): Response | Promise<Response> {
  if (!isClient(params.client)) return notFound();
  refreshDataVersion(app.db);
  const userId = params.userId.toLowerCase();
  const userkey = params.userkey.toLowerCase();
  const url = publicUrl(request, requested);
  const query = requested.searchParams;
  const userAgent = request.headers.get("user-agent") ?? "";
  const format = formatFor(params.client, userAgent, query.get("flag"));
  // sing-box: the core's dialect comes from the User-Agent too, so it is part of the cache key.
  const singbox = dialectForFetch(format, userAgent, query.get("version"));
  if (singbox === "invalid") return badVersion();
  const variant = singbox ? `${format}@${singbox}` : format;
  const file = { format, url, title: titleFor(query), query, singbox };
  // The key holds the userkey, so a hit proves the key as the lookup would; any write clears it.
  const served = app.cache.subscriptions.get(`${userId}|${userkey}|${variant}|${url}`, async () => {
    const user = await userForSubscription(app, userId, userkey);
    if (!user) return null;
    const rendered = await renderSubscription(app, user, file);
    return servedSubscription(rendered.body, subscriptionHeaders(rendered));
  });
  if (served instanceof Promise) {
    keepAddress(request);
    return served.then((loaded) => admitAndAnswer(app, request, userId, loaded, file));
  }
  return admitAndAnswer(app, request, userId, served, file);
}

/** The device gate (issue 29) after the key is proved, before the file leaves. */
function admitAndAnswer(
  app: AppContext,
  request: Request,
  userId: string,
  served: ServedSubscription | null,
  file: Omit<SubscriptionRequest, "notice">,
): Response | Promise<Response> {
  if (!served) return notFound();
  const admission = admitFetch(app, userId, request);
  if (admission instanceof Promise) {
    keepAddress(request);
    return admission.then((known) => answerAdmitted(app, userId, served, file, known));
  }
  return answerAdmitted(app, userId, served, file, admission);
}

async function answerRefused(
  app: AppContext,
  userId: string,
  file: Omit<SubscriptionRequest, "notice">,
  admission: Parameters<typeof refusedAnswer>[1],
): Promise<Response> {
  return (await refusedAnswer(app, admission, userId, file)) ?? notFound();
}

function answerAdmitted(
  app: AppContext,
  userId: string,
  served: ServedSubscription,
  file: Omit<SubscriptionRequest, "notice">,
  admission: Admission,
): Response | Promise<Response> {
  if (isRefused(admission)) return answerRefused(app, userId, file, admission);
  return markSecured(new Response(served.body, { headers: admittedHeaders(served, admission) }));
}

const listingNotice = (format: Format, notice: string) =>
  format === "ssr" && notice === Notice.unsupported ? Notice.noSsrLines : notice;

function ruleFile(body: string): Response {
  return new Response(body, {
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "public, max-age=3600" },
  });
}

/** The subscription host: the describe_host setting when set, else the host the request came to. */
export async function describeHost(app: AppContext, request: Request): Promise<string> {
  const setting = await app.settings.get("describe_host");
  const origin = setting || requestOrigin(request);
  try {
    return new URL(origin.includes("://") ? origin : `https://${origin}`).hostname;
  } catch {
    return "";
  }
}
