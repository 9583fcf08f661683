/** Who may use which subscribe button where (seed 000 §5), and the texts the buttons show. */
import { PLATFORMS, type Platform } from "../platform.ts";
import { NEEDS_USER_ID, type SubscribeClient } from "./clients.ts";

export const SubscribeMsg = {
  loginFirst: "请您登录后再进行订阅",
  networkError: "网络异常，请稍后重试",
  mobileOnly: "请在手机端打开本网站，再进行一件订阅的操作",
  iosOnly: "仅 IOS surge支持一键订阅",
  copyFailed: "复制失败",
} as const;

export type SubscribeAction = "import" | "copy" | "qr" | "reset";

export interface Viewer {
  user: { _id: string } | null;
  platform: Platform;
  mobile: boolean;
}

export interface Refusal {
  message: string;
  /** The user info looked broken: load it again. */
  refreshUser?: boolean;
}

/** Why `action` on `client` is refused for this viewer, or null when it may go ahead. */
export function subscribeRefusal(
  action: SubscribeAction,
  client: SubscribeClient,
  viewer: Viewer,
): Refusal | null {
  if (!viewer.user) return { message: SubscribeMsg.loginFirst };
  if (action !== "reset" && NEEDS_USER_ID.includes(client.key) && !viewer.user._id) {
    return { message: SubscribeMsg.networkError, refreshUser: true };
  }
  if (action === "import") {
    if (client.importOn === "mobile" && !viewer.mobile) return { message: SubscribeMsg.mobileOnly };
    if (client.importOn === "iOS" && viewer.platform !== "iOS") return { message: SubscribeMsg.iosOnly };
  }
  return null;
}

/** The platform tab to show: the `platform` cookie when it names one, else the detected platform. */
export function chosenPlatform(cookie: string | undefined, detected: Platform): Platform {
  return PLATFORMS.find((platform) => platform === cookie) ?? detected;
}

/** On the dashboard only iOS clients offer a QR code (seed 000 §2). */
export const dashboardQr = (platform: Platform) => platform === "iOS";
