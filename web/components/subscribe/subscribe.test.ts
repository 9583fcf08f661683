/** Pure rules of the subscribe buttons: the client catalogue, deep links, refusals, platform, latency. */
import { describe, expect, test } from "bun:test";
import { CLIENT_FORMATS } from "../../../src/subscription/clients.ts";
import { ROUTES } from "../../routes.ts";
import { PLATFORMS } from "../platform.ts";
import {
  ADVANCED_CLIENTS,
  PLATFORM_CLIENTS,
  SINGBOX_CLIENT,
  type SubscribeClient,
  userSubscriptionUrl,
  XRAY_JSON_KEY,
} from "./clients.ts";
import { base64url, importLink } from "./deepLinks.ts";
import { latencyLevel, latencyText } from "./latency.ts";
import { chosenPlatform, dashboardQr, SubscribeMsg, subscribeRefusal, type Viewer } from "./rules.ts";

const URL_ =
  "https://sub.example.com/api/subscript/ss/0123456789abcdef01234567/00112233445566778899aabbccddeeff";
const user = {
  _id: "0123456789abcdef01234567",
  userkey: "00112233445566778899aabbccddeeff",
  describe_host: "",
};

const byName = (clients: readonly SubscribeClient[]) =>
  Object.fromEntries(clients.map((client) => [client.name, client.key]));

describe("client catalogue (seed 000 §2)", () => {
  test("each platform tab lists the seed's clients in order, with their subscription keys", () => {
    const names = Object.fromEntries(PLATFORMS.map((p) => [p, PLATFORM_CLIENTS[p].map((c) => c.name)]));
    expect(names).toEqual({
      Windows: ["FLClash", "Clash", "v2ray"],
      Android: ["FLClash", "SingBox", "Clash", "v2rayNG", "Clash Meta"],
      iOS: ["Shadowrocket", "SingBox", "QuantumultX", "Streisands", "V2Box"],
      macOS: ["FLClash", "SingBox", "Clash", "v2ray"],
    });
    expect(byName(PLATFORM_CLIENTS.Android)).toEqual({
      FLClash: "flclash",
      SingBox: "singbox",
      Clash: "clash",
      v2rayNG: "v2ray",
      "Clash Meta": "mjclash",
    });
    expect(byName(PLATFORM_CLIENTS.iOS)).toEqual({
      Shadowrocket: "ss",
      SingBox: "singbox",
      QuantumultX: "qx",
      Streisands: "streisands",
      V2Box: "v2box",
    });
    expect(byName(PLATFORM_CLIENTS.Windows)).toEqual({ FLClash: "flclash", Clash: "clash", v2ray: "v2ray" });
  });

  test("the guides: one per client (the generic Mac link excepted), each a known route", () => {
    const guides = Object.fromEntries(PLATFORMS.map((p) => [p, PLATFORM_CLIENTS[p].map((c) => c.guide)]));
    expect(guides).toEqual({
      Windows: ["/#/flclash_for_pc", "/#/clash_for_windows", "/#/v2rayng_for_windows"],
      Android: [
        "/#/flclash_for_android",
        "/#/singbox_for_android",
        "/#/clash_for_android",
        "/#/v2rayng_for_android",
        "/#/clash_meta_for_android",
      ],
      iOS: [
        "/#/ss_for_ios",
        "/#/singbox_for_ios",
        "/#/quantumultx_for_ios",
        "/#/streisand_for_ios",
        "/#/v2box_for_ios",
      ],
      macOS: ["/#/flclash_for_pc", "/#/singbox_for_mac", "/#/clash_for_macos", undefined],
    });
    for (const guide of Object.values(guides).flat()) {
      if (guide) expect(ROUTES[guide.slice(2)]).toBeDefined();
    }
  });

  test("the advanced card: seed order, recommended and no-direct marks, keys the server knows", () => {
    expect(
      ADVANCED_CLIENTS.map((c) => [c.name, c.key, c.recommended ? "推荐" : c.noDirect ? "不支持直连" : ""]),
    ).toEqual([
      ["Shadowrocket", "ss", "推荐"],
      ["FLClash", "flclash", "推荐"],
      ["SSR", "ssr", "推荐"],
      ["Loon", "loon", "推荐"],
      ["Clash", "clash", ""],
      ["Surge", "surge", ""],
      ["QuantumultX", "qx", ""],
      ["Surfboard", "surfboard", "不支持直连"],
    ]);
    expect(SINGBOX_CLIENT.key).toBe("singbox");
    const all = [...Object.values(PLATFORM_CLIENTS).flat(), ...ADVANCED_CLIENTS, SINGBOX_CLIENT];
    for (const client of all) expect(Object.hasOwn(CLIENT_FORMATS, client.key)).toBe(true);
  });

  test("the Xray apps (v2rayNG, Streisands, V2Box) also offer the Xray JSON link; no other client does", () => {
    const all = [...Object.values(PLATFORM_CLIENTS).flat(), ...ADVANCED_CLIENTS, SINGBOX_CLIENT];
    expect(all.filter((client) => client.xrayJson).map((client) => client.name)).toEqual([
      "v2rayNG",
      "Streisands",
      "V2Box",
    ]);
    expect(CLIENT_FORMATS[XRAY_JSON_KEY]).toBe("xray");
    expect(userSubscriptionUrl(XRAY_JSON_KEY, user, "https://a.example")).toBe(
      `https://a.example/api/subscript/json/${user._id}/${user.userkey}`,
    );
  });

  test("links point at describe_host when set, else at this site", () => {
    expect(userSubscriptionUrl("clash", user, "http://127.0.0.1:3000")).toBe(
      `http://127.0.0.1:3000/api/subscript/clash/${user._id}/${user.userkey}`,
    );
    expect(userSubscriptionUrl("ss", { ...user, describe_host: "sub.example.com" }, "http://x")).toBe(URL_);
  });
});

describe("one-click import links (subscription-formats.md §5)", () => {
  test("Shadowrocket: sub:// with the URL in unpadded base64url", () => {
    expect(base64url("https://sub.example.com/s/TOKEN")).toBe("aHR0cHM6Ly9zdWIuZXhhbXBsZS5jb20vcy9UT0tFTg");
    // 1 and 2 leftover bytes: no '=' and the URL-safe alphabet.
    expect(base64url("a?>")).toBe("YT8-");
    expect(base64url("??")).toBe("Pz8");
    const link = importLink("shadowrocket", URL_, "飞渡");
    expect(link).toBe(`shadowrocket://add/sub://${base64url(URL_)}?remark=%E9%A3%9E%E6%B8%A1`);
    const encoded = link.slice("shadowrocket://add/sub://".length, link.indexOf("?"));
    expect(Buffer.from(encoded, "base64url").toString()).toBe(URL_);
  });

  const QX_PREFIX = "quantumult-x:///update-configuration?remote-resource=";
  const qxResource = (link: string) => {
    expect(link.startsWith(QX_PREFIX)).toBe(true);
    return JSON.parse(decodeURIComponent(link.slice(QX_PREFIX.length)));
  };

  test("Quantumult X without list settings: only the server list, updated every 172800 s (seed 000 §9)", () => {
    const resource = qxResource(importLink("quantumultx", URL_, "飞渡"));
    expect(resource).toEqual({ server_remote: [`${URL_}, tag=飞渡, update-interval=172800, enabled=true`] });
    const noLists = { qx_filter_url: "", qx_rewrite_url: " " };
    expect(importLink("quantumultx", URL_, "飞渡", noLists)).toBe(importLink("quantumultx", URL_, "飞渡"));
  });

  test("Quantumult X with the operator's lists: filter and rewrite lists updated every 2592000 s", () => {
    const lists = {
      qx_filter_url: "https://rules.example.net/qx/filter.list",
      qx_rewrite_url: "https://rules.example.net/qx/rewrite.conf",
    };
    expect(qxResource(importLink("quantumultx", URL_, "飞渡", lists))).toEqual({
      server_remote: [`${URL_}, tag=飞渡, update-interval=172800, enabled=true`],
      filter_remote: [`${lists.qx_filter_url}, tag=飞渡分流, update-interval=2592000, enabled=true`],
      rewrite_remote: [`${lists.qx_rewrite_url}, tag=飞渡重写, update-interval=2592000, enabled=true`],
    });
    // Each list is imported only when its own setting is filled.
    expect(qxResource(importLink("quantumultx", URL_, "飞渡", { ...lists, qx_rewrite_url: "" }))).toEqual({
      server_remote: [`${URL_}, tag=飞渡, update-interval=172800, enabled=true`],
      filter_remote: [`${lists.qx_filter_url}, tag=飞渡分流, update-interval=2592000, enabled=true`],
    });
  });

  test("the list settings do not change the other clients' links", () => {
    const lists = {
      qx_filter_url: "https://rules.example.net/f",
      qx_rewrite_url: "https://rules.example.net/r",
    };
    expect(importLink("clash", URL_, "飞渡", lists)).toBe(importLink("clash", URL_, "飞渡"));
  });

  test("the URL-parameter schemes encode the URL; Streisand and V2Box take it as is", () => {
    const enc = encodeURIComponent(URL_);
    expect(importLink("clash", URL_, "飞渡")).toBe(
      `clash://install-config?url=${enc}&name=%E9%A3%9E%E6%B8%A1`,
    );
    expect(importLink("singbox", URL_, "飞渡")).toBe(
      `sing-box://import-remote-profile?url=${enc}#%E9%A3%9E%E6%B8%A1`,
    );
    expect(importLink("surge", URL_, "a b")).toBe(`surge:///install-config?url=${enc}&name=a%20b`);
    expect(importLink("loon", URL_, "x")).toBe(`loon://import?sub=${enc}`);
    expect(importLink("v2rayng", URL_, "x")).toBe(`v2rayng://install-sub?url=${enc}&name=x`);
    expect(importLink("streisand", URL_, "x")).toBe(`streisand://import/${URL_}#x`);
    expect(importLink("v2box", URL_, "x")).toBe(`v2box://install-sub?url=${URL_}&name=x`);
  });

  test("every Clash-family client imports through clash://", () => {
    const clashFamily = Object.values(PLATFORM_CLIENTS)
      .flat()
      .filter((c) => ["clash", "flclash", "mjclash"].includes(c.key));
    expect(clashFamily.length).toBeGreaterThan(0);
    for (const client of clashFamily) expect(client.deepLink).toBe("clash");
  });
});

describe("subscribe button rules (seed 000 §5)", () => {
  const client = (name: string, list: readonly SubscribeClient[] = ADVANCED_CLIENTS) =>
    list.find((c) => c.name === name) as SubscribeClient;
  const desktop: Viewer = { user, platform: "Windows", mobile: false };
  const android: Viewer = { user, platform: "Android", mobile: true };
  const iphone: Viewer = { user, platform: "iOS", mobile: true };
  const message = (...args: Parameters<typeof subscribeRefusal>) =>
    subscribeRefusal(...args)?.message ?? null;

  test("every button needs a login", () => {
    for (const action of ["import", "copy", "qr", "reset"] as const) {
      expect(message(action, client("FLClash"), { ...desktop, user: null })).toBe(SubscribeMsg.loginFirst);
    }
    expect(message("copy", client("FLClash"), desktop)).toBeNull();
  });

  test("Shadowrocket and SSR need the user id, and then ask for a user-info refresh", () => {
    const noId = { ...iphone, user: { _id: "" } };
    for (const name of ["Shadowrocket", "SSR"]) {
      expect(subscribeRefusal("copy", client(name), noId)).toEqual({
        message: SubscribeMsg.networkError,
        refreshUser: true,
      });
    }
    expect(message("copy", client("Loon"), noId)).toBeNull();
  });

  test("Shadowrocket and Quantumult import with one click only on a phone; Surge only on iOS", () => {
    for (const name of ["Shadowrocket", "SSR", "QuantumultX"]) {
      expect(message("import", client(name), desktop)).toBe(SubscribeMsg.mobileOnly);
      expect(message("import", client(name), android)).toBeNull();
      expect(message("copy", client(name), desktop)).toBeNull();
    }
    expect(message("import", client("Shadowrocket", PLATFORM_CLIENTS.iOS), desktop)).toBe(
      SubscribeMsg.mobileOnly,
    );
    expect(message("import", client("QuantumultX", PLATFORM_CLIENTS.iOS), iphone)).toBeNull();
    expect(message("import", client("Surge"), android)).toBe(SubscribeMsg.iosOnly);
    expect(message("import", client("Surge"), { ...desktop, platform: "macOS" })).toBe(SubscribeMsg.iosOnly);
    expect(message("import", client("Surge"), iphone)).toBeNull();
    expect(message("import", client("Clash"), desktop)).toBeNull();
  });

  test("the platform cookie wins when it names a platform; QR codes on the dashboard for iOS only", () => {
    expect(chosenPlatform("iOS", "Windows")).toBe("iOS");
    expect(chosenPlatform("macOS", "Android")).toBe("macOS");
    expect(chosenPlatform(undefined, "Android")).toBe("Android");
    expect(chosenPlatform("ios", "Windows")).toBe("Windows");
    expect(chosenPlatform("Linux", "macOS")).toBe("macOS");
    expect(PLATFORMS.filter(dashboardQr)).toEqual(["iOS"]);
  });
});

describe("node latency (seed 000 §9)", () => {
  test("under 150 ms green, 150–199 yellow, 200 and above red, 0 not measured", () => {
    const levels = [1, 149, 150, 199, 200, 1500, 0].map(latencyLevel);
    expect(levels).toEqual(["good", "good", "fair", "fair", "bad", "bad", "none"]);
    expect([latencyText(0), latencyText(87)]).toEqual(["未测速", "87 ms"]);
  });
});
