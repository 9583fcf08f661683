/**
 * The HWID contract on a subscription fetch (issue 29; subscription-formats.md §7): the device
 * headers read into a claim, the device service's decision, and what the answer carries for it.
 * Runs after the cache proved the key and before any cached file is sent, so a refused device
 * never gets the lines, and a cached answer still registers or refreshes the device.
 */
import type { AppContext } from "../context.ts";
import { DeviceMsg } from "../modules/device/schema.ts";
import { type Admission, admitDevice, deviceClaim } from "../modules/device/service.ts";
import { findUserById } from "../modules/user/service.ts";
import { requestView } from "../rpc/request-view.ts";
import { renderSubscription, type SubscriptionRequest, subscriptionHeaders } from "./service.ts";

/** The decision for this fetch of `userId`'s subscription (its key already proved). */
export async function admitFetch(app: AppContext, userId: string, request: Request): Promise<Admission> {
  const headers = request.headers;
  const claim = deviceClaim({
    hwid: headers.get("x-hwid"),
    platform: headers.get("x-device-os"),
    osVersion: headers.get("x-ver-os"),
    model: headers.get("x-device-model"),
    userAgent: headers.get("user-agent"),
    ip: requestView(request).ip,
  });
  return await admitDevice(app, userId, claim);
}

/** The headers an admitted fetch adds to the file; null when there are none (no limit). */
export function admittedHeaders(admission: Admission): Record<string, string> | null {
  if (admission.kind !== "active") return null;
  return { "x-hwid-active": "true", "x-hwid-limit": String(admission.limit) };
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
