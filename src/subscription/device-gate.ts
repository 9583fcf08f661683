/**
 * The HWID contract on a subscription fetch (issue 29; subscription-formats.md §7): the device
 * headers read, the device service's decision, and what the answer carries for it.
 * Runs after the cache proved the key and before any cached file is sent, so a refused device
 * never gets the lines, and a cached answer still registers or refreshes the device.
 */
import type { AppContext } from "../context.ts";
import { DeviceMsg } from "../modules/device/schema.ts";
import { type Admission, admitDevice, canonicalHwid } from "../modules/device/service.ts";
import { findUserById } from "../modules/user/service.ts";
import { requestView } from "../rpc/request-view.ts";
import type { ServedSubscription } from "./served.ts";
import { renderSubscription, type SubscriptionRequest, subscriptionHeaders } from "./service.ts";

/**
 * The decision for this fetch of `userId`'s subscription (its key already proved); answered at
 * once, not as a promise, when nothing needs writing (device/service.ts `admitDevice`).
 */
export function admitFetch(
  app: AppContext,
  userId: string,
  request: Request,
): Admission | Promise<Admission> {
  const headers = request.headers;
  return admitDevice(app, userId, canonicalHwid(headers.get("x-hwid")), () => ({
    platform: headers.get("x-device-os"),
    osVersion: headers.get("x-ver-os"),
    model: headers.get("x-device-model"),
    userAgent: headers.get("user-agent"),
    ip: requestView(request).ip,
  }));
}

/**
 * The file's headers with those of an admission under a limit, made once per cached file and
 * limit. A Headers object, which a Response copies in about half the time of a plain object's
 * entries: the x-hwid-* headers cost the hot path nothing more.
 */
const withDeviceHeaders = new WeakMap<ServedSubscription, { limit: number; headers: Headers }>();

/** The headers an admitted fetch is answered with: the file's, plus x-hwid-* under a limit. */
export function admittedHeaders(served: ServedSubscription, admission: Admission): HeadersInit {
  if (admission.kind !== "active") return served.headers;
  const made = withDeviceHeaders.get(served);
  if (made?.limit === admission.limit) return made.headers;
  const headers = new Headers(served.headers);
  headers.set("x-hwid-active", "true");
  headers.set("x-hwid-limit", String(admission.limit));
  withDeviceHeaders.set(served, { limit: admission.limit, headers });
  return headers;
}

export const isRefused = (
  admission: Admission,
): admission is Extract<Admission, { kind: "max-reached" | "not-supported" }> =>
  admission.kind === "max-reached" || admission.kind === "not-supported";

const REFUSALS = {
  "max-reached": { notice: DeviceMsg.maxReached, header: "x-hwid-max-devices-reached" },
  "not-supported": { notice: DeviceMsg.notSupported, header: "x-hwid-not-supported" },
} as const;

/**
 * The notice subscription for a refused device, in the format asked for: one entry whose name is
 * the reason, no lines, no usage, no credentials. Not cached: it is small, and rare per account.
 */
export async function refusedAnswer(
  app: AppContext,
  admission: Extract<Admission, { kind: "max-reached" | "not-supported" }>,
  userId: string,
  file: Omit<SubscriptionRequest, "notice">,
): Promise<Response | null> {
  const user = await findUserById(app, userId);
  if (!user) return null;
  const refusal = REFUSALS[admission.kind];
  const rendered = await renderSubscription(app, user, {
    ...file,
    notice: refusal.notice,
    headerLines: false,
  });
  const { "subscription-userinfo": _usage, ...headers } = subscriptionHeaders(rendered);
  return new Response(rendered.body, { headers: { ...headers, [refusal.header]: "true" } });
}
