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

/** base64url without padding of the UTF-8 bytes, as Shadowrocket's `sub://` wants it. */
export function base64url(text: string): string {
  return utf8ToBase64(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The link that opens the app and adds the subscription `url` under `name`. */
export function importLink(kind: DeepLinkKind, url: string, name: string): string {
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
        JSON.stringify({ server_remote: [`${url}, tag=${name}`] }),
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
