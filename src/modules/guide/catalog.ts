/**
 * The client guides of seed 000 §2 (issue 17), as data: one guide component renders them all, the
 * server serves their files from `<data>/guide/`, and `ferry guide list` shows which are present.
 * Pure data (no React, no Node): imported by the SPA, the server and the CLI.
 */

/** A file an operator may put in `<data>/guide/`: an installer or a step image. */
export interface GuideFile {
  /** Relative to `<data>/guide/` and to the URL `/guide/`: lowercase letters, digits, `._-/` only. */
  path: string;
  kind: "installer" | "image";
  label: string;
  /** For an image: the guide step (1–5) it illustrates. */
  step?: number;
}

export interface GuideInfo {
  /** The SPA route, e.g. "/clash_for_windows" (web/routes.ts has its title). */
  route: string;
  client: string;
  platform: string;
  /** The client version the guide shows (seed 000 §2 "Shown client versions"), "" when none. */
  version: string;
  /** The client's official project or store page: the download link when no installer is present. */
  officialUrl: string;
  files: GuideFile[];
}

/** The client guide's installer (when it has one) and one picture for each of steps 1–4. */
function files(slug: string, installer?: { file: string; label: string }): GuideFile[] {
  const images = ["安装", "一键导入", "手动导入", "启动代理"].map(
    (what, index): GuideFile => ({
      path: `${slug}/step${index + 1}.png`,
      kind: "image",
      label: `${what}截图`,
      step: index + 1,
    }),
  );
  return installer
    ? [{ path: `${slug}/${installer.file}`, kind: "installer", label: installer.label }, ...images]
    : images;
}

const guide = (
  route: string,
  client: string,
  platform: string,
  version: string,
  officialUrl: string,
  installer?: { file: string; label: string },
): GuideInfo => ({ route, client, platform, version, officialUrl, files: files(route.slice(1), installer) });

const appStore = (name: string, id: string) => `https://apps.apple.com/app/${name}/id${id}`;
const SING_BOX_APPLE = "https://sing-box.sagernet.org/clients/apple/";

/** Seed 000 §2: one guide per route, in the route table's order. */
export const GUIDES: GuideInfo[] = [
  guide(
    "/clash_for_windows",
    "Clash",
    "Windows",
    "0.20.39",
    "https://github.com/Fndroid/clash_for_windows_pkg/releases",
    { file: "clash-for-windows-setup-0.20.39.exe", label: "Clash for Windows 0.20.39 安装包（64 位）" },
  ),
  guide(
    "/clash_for_android",
    "Clash",
    "Android",
    "2.1.5",
    "https://github.com/Kr328/ClashForAndroid/releases",
    { file: "clash-for-android-2.1.5.apk", label: "Clash for Android 2.1.5 安装包（APK）" },
  ),
  guide(
    "/clash_meta_for_android",
    "Clash Meta",
    "Android",
    "2.10.4",
    "https://github.com/MetaCubeX/ClashMetaForAndroid/releases",
    { file: "clash-meta-for-android-2.10.4.apk", label: "Clash Meta for Android 2.10.4 安装包（APK）" },
  ),
  guide(
    "/flclash_for_android",
    "FLClash",
    "Android",
    "0.8.59（APK 0.8.66）",
    "https://github.com/chen08209/FlClash/releases",
    { file: "flclash-0.8.66-android.apk", label: "FLClash 安装包（APK 0.8.66）" },
  ),
  guide("/v2rayng_for_android", "v2rayNG", "Android", "1.6.20", "https://github.com/2dust/v2rayNG/releases", {
    file: "v2rayng-1.6.20.apk",
    label: "v2rayNG 1.6.20 安装包（APK）",
  }),
  guide("/v2rayng_for_windows", "v2rayN", "Windows", "", "https://github.com/2dust/v2rayN/releases", {
    file: "v2rayn-windows-64.zip",
    label: "v2rayN 安装包（7.0.0 或更新，zip）",
  }),
  guide(
    "/flclash_for_pc",
    "FLClash",
    "Windows / macOS",
    "0.8.59",
    "https://github.com/chen08209/FlClash/releases",
    {
      file: "flclash-0.8.59-windows-setup.exe",
      label: "FLClash 0.8.59 Windows 安装包",
    },
  ),
  guide("/ss_for_ios", "Shadowrocket", "iOS", "", appStore("shadowrocket", "932747118")),
  guide("/singbox_for_ios", "SingBox", "iOS", "", SING_BOX_APPLE),
  guide("/singbox_for_mac", "SingBox", "macOS", "", SING_BOX_APPLE),
  guide(
    "/singbox_for_android",
    "SingBox",
    "Android",
    "0.8.59",
    "https://sing-box.sagernet.org/clients/android/",
    { file: "singbox-0.8.59-android.apk", label: "SingBox 0.8.59 安装包（APK）" },
  ),
  guide("/singbox_for_win", "SingBox", "Windows", "0.8.59", "https://github.com/SagerNet/sing-box/releases", {
    file: "singbox-0.8.59-windows-setup.exe",
    label: "SingBox 0.8.59 Windows 安装包",
  }),
  guide("/v2box_for_ios", "V2Box", "iOS", "", appStore("v2box-v2ray-client", "6446814690")),
  guide("/streisand_for_ios", "Streisand", "iOS", "", appStore("streisand", "6450534064")),
  guide("/quantumult_for_ios", "Quantumult", "iOS", "", appStore("quantumult", "1252015438")),
  guide("/quantumultx_for_ios", "QuantumultX", "iOS", "", appStore("quantumult-x", "1443988620")),
  guide("/clash_for_macos", "Clash", "macOS", "1.40.0", "https://github.com/yichengchen/clashX/releases", {
    file: "clashx-1.40.0.dmg",
    label: "ClashX 1.40.0 安装包（dmg）",
  }),
];

/** The guide at `route`, if there is one. */
export const guideAt = (route: string): GuideInfo | undefined =>
  GUIDES.find((entry) => entry.route === route);
