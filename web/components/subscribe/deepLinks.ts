/** One-click import links (docs/subscription-formats.md §5). */
import { utf8ToBase64 } from "../../../src/rpc/envelope.ts";

export type DeepLinkKind =
  | "clash"
  | "singbox"
  | "shadowrocket"
  | "quantumultx"
  | "surge"
  | "loon"
  | "streisand"
  | "v2box"
  | "v2rayng";

/** Seed 000 §9: Quantumult X refreshes the server list every 2 days, the rule lists every 30 days. */
export const QX_SERVER_UPDATE_SECONDS = 172_800;
export const QX_RULES_UPDATE_SECONDS = 2_592_000;

/** The operator's Quantumult X rule lists (settings, through /api/host/get); "" leaves one out. */
export interface QxRuleLists {
  qx_filter_url: string;
  qx_rewrite_url: string;
}

const NO_QX_LISTS: QxRuleLists = { qx_filter_url: "", qx_rewrite_url: "" };

/**
 * Quantumult X's remote-resource JSON: the subscription as the server list, plus the filter and
 * rewrite lists only where the operator set them, so no import names a host nobody chose.
 */
function qxRemoteResource(url: string, name: string, lists: QxRuleLists) {
  const entry = (address: string, tag: string, seconds: number) =>
    `${address}, tag=${tag}, update-interval=${seconds}, enabled=true`;
  const filter = lists.qx_filter_url.trim();
  const rewrite = lists.qx_rewrite_url.trim();
  return {
    server_remote: [entry(url, name, QX_SERVER_UPDATE_SECONDS)],
    ...(filter ? { filter_remote: [entry(filter, `${name}分流`, QX_RULES_UPDATE_SECONDS)] } : {}),
    ...(rewrite ? { rewrite_remote: [entry(rewrite, `${name}重写`, QX_RULES_UPDATE_SECONDS)] } : {}),
  };
}

/** base64url without padding of the UTF-8 bytes, as Shadowrocket's `sub://` wants it. */
export function base64url(text: string): string {
  return utf8ToBase64(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The link that opens the app and adds the subscription `url` under `name`. */
export function importLink(
  kind: DeepLinkKind,
  url: string,
  name: string,
  qxLists: QxRuleLists = NO_QX_LISTS,
): string {
  const enc = encodeURIComponent;
  switch (kind) {
    case "clash":
      return `clash://install-config?url=${enc(url)}&name=${enc(name)}`;
    case "singbox":
      return `sing-box://import-remote-profile?url=${enc(url)}#${enc(name)}`;
    case "shadowrocket":
      return `shadowrocket://add/sub://${base64url(url)}?remark=${enc(name)}`;
    case "quantumultx":
      return `quantumult-x:///update-configuration?remote-resource=${enc(
        JSON.stringify(qxRemoteResource(url, name, qxLists)),
      )}`;
    case "surge":
      return `surge:///install-config?url=${enc(url)}&name=${enc(name)}`;
    case "loon":
      return `loon://import?sub=${enc(url)}`;
    case "streisand":
      return `streisand://import/${url}#${enc(name)}`;
    case "v2box":
      return `v2box://install-sub?url=${url}&name=${enc(name)}`;
    case "v2rayng":
      return `v2rayng://install-sub?url=${enc(url)}&name=${enc(name)}`;
  }
}
