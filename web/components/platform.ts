/** Device type from the user agent (seed 000 §9): Windows, macOS, iOS, Android; default Windows. */
export type Platform = "Windows" | "macOS" | "iOS" | "Android";
export const PLATFORMS: readonly Platform[] = ["Windows", "Android", "iOS", "macOS"];

export function detectPlatform(
  ua: string = navigator.userAgent,
  touchPoints: number = navigator.maxTouchPoints ?? 0,
): Platform {
  if (/android/i.test(ua)) return "Android";
  if (/iphone|ipad|ipod/i.test(ua)) return "iOS";
  // iPadOS asks for the desktop site and says "Macintosh"; a touch screen gives it away.
  if (/macintosh|mac os x/i.test(ua)) return touchPoints > 1 ? "iOS" : "macOS";
  return "Windows";
}

export function isMobile(ua: string = navigator.userAgent): boolean {
  const platform = detectPlatform(ua);
  return platform === "iOS" || platform === "Android" || /mobile/i.test(ua);
}
