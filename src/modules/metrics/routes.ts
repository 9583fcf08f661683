import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { requestView } from "../../rpc/request-view.ts";
import { metricsAccess, metricsText } from "./service.ts";

const EXPOSITION_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** `GET /metrics`: Prometheus text format, for the bearer token or a local scraper (service.ts). */
export function metricsRoutes(app: AppContext) {
  return new Elysia().get("/metrics", async ({ request }) => {
    const access = metricsAccess(await app.settings.get("metrics_token"), {
      ip: requestView(request).ip,
      headers: request.headers,
      behindProxy: app.trustedProxies.entries.length > 0,
    });
    if (access === "hidden") return new Response("页面不存在", { status: 404 });
    if (access === "unauthorized") {
      return new Response("Unauthorized", {
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="metrics"' },
      });
    }
    return new Response(await metricsText(app), {
      headers: { "content-type": EXPOSITION_TYPE, "cache-control": "no-store" },
    });
  });
}
