import { TOAST_LONG, TOAST_SHORT, toast } from "./Toast.tsx";

export const COPY_OK = "已复制到剪贴板";
export const COPY_FAILED = "复制失败, 请手动复制";

function legacyCopy(text: string): boolean {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/**
 * Copies text and says so: 已复制到剪贴板 (2 s), or 复制失败, 请手动复制 (10 s).
 * The Clipboard API needs https; plain-http sites fall back to execCommand.
 */
export async function copyToClipboard(
  text: string,
  messages: { ok?: string; failed?: string } = {},
): Promise<boolean> {
  let ok = false;
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      ok = true;
    } else {
      ok = legacyCopy(text);
    }
  } catch {
    ok = legacyCopy(text);
  }
  if (ok) toast.success(messages.ok ?? COPY_OK, TOAST_SHORT);
  else toast.error(messages.failed ?? COPY_FAILED, TOAST_LONG);
  return ok;
}
