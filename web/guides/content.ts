/**
 * What each client guide says (seed 000 §2 "Client guides"): the five steps' paragraphs per route,
 * over the catalog's client, version and files (src/modules/guide/catalog.ts). Sentences several
 * clients share are built once below; GuidePage.tsx renders any entry.
 */
import { TEST_URL } from "../../src/subscription/test-url.ts";
import { PLATFORM_CLIENTS, type SubscribeClient } from "../components/subscribe/clients.ts";
import { QX_RULES_UPDATE_SECONDS, QX_SERVER_UPDATE_SECONDS } from "../components/subscribe/deepLinks.ts";

/** The five step headings, identical on every guide. */
export const STEP_TITLES = ["安装客户端", "一键导入订阅", "手动导入订阅", "启动代理", "其他说明"] as const;

/** The client's own subscription auto-update interval the guides suggest. */
export const AUTO_UPDATE_MINUTES = 1440;

export const ANDROID_REQUIREMENT = "需要 Android 7.0 或更高版本。";

export interface GuideContent {
  /** The dashboard's subscribe button for this client (same key, one-click link and rules). */
  subscribe: SubscribeClient;
  /** System requirement shown in step 1. */
  requirement: string;
  install: string[];
  oneClick: string[];
  manual: string[];
  start: string[];
  tips: string[];
  /** Streisand: the 导入分流规则 button (works only on a phone, after logging in). */
  routeImport?: boolean;
  /** Shadowrocket: the rule file /describe/ss_rule.conf as a configuration. */
  ruleFile?: boolean;
}

/** The dashboard's client whose install guide is `route`. */
function dashboardClient(route: string): SubscribeClient | undefined {
  return Object.values(PLATFORM_CLIENTS)
    .flat()
    .find((client) => client.guide === `/#${route}`);
}

// Two guides have no client on the dashboard's tabs: the same subscription keys, their own names.
const EXTRA_CLIENTS: Record<string, SubscribeClient> = {
  "/singbox_for_win": { name: "SingBox", key: "singbox", deepLink: "singbox", guide: "/#/singbox_for_win" },
  "/quantumult_for_ios": { name: "Quantumult", key: "q", guide: "/#/quantumult_for_ios" },
};

export function subscribeClientFor(route: string): SubscribeClient | undefined {
  return EXTRA_CLIENTS[route] ?? dashboardClient(route);
}

const oneClick = (app: string): string[] => [
  "先登录本站，再点击下方的订阅按钮，在菜单中选择「一键导入」。",
  `浏览器询问是否打开 ${app} 时选择「打开」，${app} 会自动添加本站订阅，名称为「飞渡」。`,
  "若点击后没有反应（未安装客户端或浏览器拦截），请按第 3 步手动导入。",
];

const COPY = "点击下方「复制订阅链接」按钮，在菜单中选择「复制订阅」，订阅链接即复制到剪贴板。";
const autoUpdate = (where: string) =>
  `${where}把自动更新间隔设为 ${AUTO_UPDATE_MINUTES} 分钟（每天更新一次），节点变动后无需手动更新。`;
const NO_SHARE =
  "订阅链接等同于账号密码，切勿分享给他人；如已泄露，请在订阅按钮的菜单中选择「重置订阅链接」，然后在所有设备上重新订阅。";
const UPDATE_WHEN_BROKEN = "节点全部超时或无法连接时，先更新订阅再重试。";
/** v2rayNG, Streisand and V2Box also import the Xray JSON subscription (issue 29). */
const xrayJson = (app: string) =>
  `${app} 也可以导入 Xray JSON 订阅：在订阅按钮的菜单中选择「复制 Xray JSON 订阅」，按第 3 步添加。每条线路是一份完整配置，国内网站直连，其余走代理。`;
const APP_STORE =
  "中国大陆地区的 App Store 没有此应用，请使用非中国大陆地区的 Apple ID 登录 App Store 后搜索安装。";

function androidClash(app: string, start: string[]): Omit<GuideContent, "subscribe"> {
  return {
    requirement: ANDROID_REQUIREMENT,
    install: [`下载安装包后在手机上打开安装；如提示「未知来源」，请在系统设置中允许浏览器安装应用。`],
    oneClick: oneClick(app),
    manual: [
      COPY,
      `打开 ${app}，进入「配置」，点击右上角「+」，选择「URL」/「从 URL 导入」，名称填写「飞渡」，把订阅链接粘贴到 URL 一栏，点击保存。`,
      autoUpdate("在同一页面"),
    ],
    start,
    tips: [UPDATE_WHEN_BROKEN, NO_SHARE],
  };
}

const CONTENT: Record<string, Omit<GuideContent, "subscribe">> = {
  "/clash_for_windows": {
    requirement: "Clash for Windows 仅支持 64 位 Windows（Windows 10 / 11 64 位）。",
    install: [
      "下载安装包并双击安装；安装时可勾选「为所有用户安装」。安装完成后从开始菜单打开 Clash for Windows。",
    ],
    oneClick: oneClick("Clash for Windows"),
    manual: [
      COPY,
      "打开 Clash for Windows，进入「Profiles（配置）」页面，把链接粘贴到顶部输入框，点击「Download（下载）」，下载成功后点击新出现的配置使其生效。",
      autoUpdate("在配置上点右键选择「Settings」，"),
    ],
    start: [
      "回到「General（常规）」页面，打开「System Proxy（系统代理）」开关。",
      "在「Proxies（代理）」页面选择「Rule（规则）」模式，再选择一个节点即可上网。",
    ],
    tips: [
      "如需让不走系统代理的软件（如部分游戏）也走代理，可安装并打开「Service Mode」与「TUN Mode」。",
      UPDATE_WHEN_BROKEN,
      NO_SHARE,
    ],
  },
  "/clash_for_android": androidClash("Clash", [
    "回到首页，点击「已停止，点击启动」，首次启动时允许建立 VPN 连接。",
    "在「代理」页面选择「规则」模式和一个节点即可上网。",
  ]),
  "/clash_meta_for_android": androidClash("Clash Meta", [
    "回到首页，点击「已停止，点击启动」，首次启动时允许建立 VPN 连接。",
    "在「代理」页面选择一个节点即可上网。",
  ]),
  "/flclash_for_android": {
    ...androidClash("FLClash", [
      "回到「仪表盘」，点击右下角的启动按钮，首次启动时允许建立 VPN 连接。",
      "在「代理」页面选择一个节点即可上网。",
    ]),
    tips: [
      `测速链接建议设为 ${TEST_URL}（在「工具」→「基本配置」中修改），节点延迟更准确。`,
      UPDATE_WHEN_BROKEN,
      NO_SHARE,
    ],
  },
  "/v2rayng_for_android": {
    requirement: ANDROID_REQUIREMENT,
    install: ["下载安装包后在手机上打开安装；如提示「未知来源」，请在系统设置中允许浏览器安装应用。"],
    oneClick: oneClick("v2rayNG"),
    manual: [
      COPY,
      "打开 v2rayNG，点击左上角菜单进入「订阅分组设置」，点击右上角「+」，备注填写「飞渡」，把订阅链接粘贴到「可选地址（url）」一栏，点击右上角保存。",
      "回到首页，点击右上角「⋮」选择「更新订阅」，节点即出现在列表中。",
    ],
    start: ["选中一个节点，点击右下角的「V」启动按钮，首次启动时允许建立 VPN 连接。"],
    tips: [
      "可在首页「⋮」菜单中选择「测试全部配置真连接」，挑选延迟最低的节点。",
      `${xrayJson("v2rayNG")}需要 v2rayNG 1.8.29 或更新版本。`,
      UPDATE_WHEN_BROKEN,
      NO_SHARE,
    ],
  },
  "/v2rayng_for_windows": {
    requirement: "需要 v2rayN 7.0.0 或更新版本（Windows 10 / 11）；旧版本无法识别本站订阅，请先升级。",
    install: ["下载 zip 压缩包，解压到任意文件夹（路径中最好不含中文），双击其中的 v2rayN.exe 运行。"],
    oneClick: [
      "v2rayN 不支持从浏览器一键导入，请使用第 3 步手动导入；「订阅」菜单中的「复制订阅」就是 v2rayN 需要的链接。",
    ],
    manual: [
      COPY,
      "打开 v2rayN，点击「订阅分组」→「订阅分组设置」→「添加」，别名填写「飞渡」，把订阅链接粘贴到「可选地址（url）」，确定保存。",
      autoUpdate("在同一窗口勾选「启用自动更新」，"),
      "回到主界面，点击「订阅分组」→「更新全部订阅（不通过代理）」。",
    ],
    start: [
      "在节点列表中选中一个节点，按回车设为活动节点。",
      "在窗口底部（或托盘图标右键）把「系统代理」设为「自动配置系统代理」，路由选择「绕过大陆」。",
    ],
    tips: ["可按 Ctrl+R 测试全部节点的真连接延迟。", UPDATE_WHEN_BROKEN, NO_SHARE],
  },
  "/flclash_for_pc": {
    requirement: "支持 Windows 10 / 11（64 位）与 macOS 10.15 或更高版本。",
    install: ["Windows 下载安装包后双击安装；macOS 请从官网下载 dmg，打开后把 FLClash 拖入「应用程序」。"],
    oneClick: oneClick("FLClash"),
    manual: [
      COPY,
      "打开 FLClash，进入「配置」，点击右下角「+」，选择「URL」，把订阅链接粘贴进去后提交。",
      autoUpdate("在配置的「编辑」中，"),
    ],
    start: [
      "回到「仪表盘」，打开「系统代理」开关，再点击右下角的启动按钮。",
      "在「代理」页面选择一个节点即可上网。",
    ],
    tips: [
      `测速链接建议设为 ${TEST_URL}（在「工具」→「基本配置」中修改），节点延迟更准确。`,
      UPDATE_WHEN_BROKEN,
      NO_SHARE,
    ],
  },
  "/ss_for_ios": {
    requirement: "需要 iOS 15 或更高版本的 iPhone / iPad。",
    install: [APP_STORE, "在 App Store 搜索「Shadowrocket」购买并安装（付费应用）。"],
    oneClick: [
      "一键导入只能在手机上进行：请用 iPhone 的 Safari 打开本站并登录。",
      ...oneClick("Shadowrocket"),
    ],
    manual: [
      COPY,
      "打开 Shadowrocket，点击右上角「+」，类型选择「Subscribe」，把订阅链接粘贴到「URL」一栏，备注填写「飞渡」，点击「完成」。",
      "在首页订阅上左滑选择「更新」，并在「设置」→「订阅」中打开「打开时更新」与「自动后台更新」。",
    ],
    start: ["在首页选择一个节点，打开顶部「未连接」开关，首次连接时允许添加 VPN 配置。"],
    tips: [UPDATE_WHEN_BROKEN, NO_SHARE],
    ruleFile: true,
  },
  "/singbox_for_ios": {
    requirement: "需要 iOS 15 或更高版本的 iPhone / iPad。",
    install: [APP_STORE, "在 App Store 搜索「sing-box」安装（免费）。"],
    oneClick: oneClick("sing-box"),
    manual: [
      COPY,
      "打开 sing-box，进入「Profiles」，点击「New Profile」，类型选择「Remote」，名称填写「飞渡」，把订阅链接粘贴到「URL」，点击「Create」。",
      autoUpdate("打开「Auto Update」，"),
    ],
    start: ["进入「Dashboard」，选择刚添加的配置，点击「Enable」，首次启动时允许添加 VPN 配置。"],
    tips: [UPDATE_WHEN_BROKEN, NO_SHARE],
  },
  "/singbox_for_mac": {
    requirement: "需要 macOS 13 或更高版本。",
    install: [APP_STORE, "在 Mac 上的 App Store 搜索「sing-box」安装，或从官网下载独立安装包。"],
    oneClick: oneClick("sing-box"),
    manual: [
      COPY,
      "打开 sing-box，进入「Profiles」，点击「New Profile」，类型选择「Remote」，名称填写「飞渡」，把订阅链接粘贴到「URL」，点击「Create」。",
      autoUpdate("打开「Auto Update」，"),
    ],
    start: ["进入「Dashboard」，选择刚添加的配置，点击「Enable」，首次启动时允许添加网络扩展。"],
    tips: [UPDATE_WHEN_BROKEN, NO_SHARE],
  },
  "/singbox_for_android": {
    requirement: ANDROID_REQUIREMENT,
    install: ["下载安装包后在手机上打开安装；如提示「未知来源」，请在系统设置中允许浏览器安装应用。"],
    oneClick: oneClick("SingBox"),
    manual: [
      COPY,
      "打开 SingBox，进入「Profiles」，点击「+」→「Create Manually」，类型选择「Remote」，名称填写「飞渡」，把订阅链接粘贴到「URL」，点击「Create」。",
      autoUpdate("打开「Auto Update」，"),
    ],
    start: ["进入「Dashboard」，选择刚添加的配置，点击右下角启动按钮，首次启动时允许建立 VPN 连接。"],
    tips: [UPDATE_WHEN_BROKEN, NO_SHARE],
  },
  "/singbox_for_win": {
    requirement: "支持 Windows 10 / 11（64 位）。",
    install: ["下载安装包后双击安装，安装完成后以管理员身份运行 SingBox（TUN 模式需要管理员权限）。"],
    oneClick: oneClick("SingBox"),
    manual: [
      COPY,
      "打开 SingBox，进入「配置」，点击「+」，选择「从 URL 添加」，名称填写「飞渡」，把订阅链接粘贴进去后保存。",
      autoUpdate("在配置的编辑页面，"),
    ],
    start: ["回到首页，选择刚添加的配置并点击「连接」，在「代理」页面选择一个节点即可上网。"],
    tips: [UPDATE_WHEN_BROKEN, NO_SHARE],
  },
  "/v2box_for_ios": {
    requirement: "需要 iOS 15 或更高版本的 iPhone / iPad。",
    install: [APP_STORE, "在 App Store 搜索「V2Box」安装（免费）。"],
    oneClick: oneClick("V2Box"),
    manual: [
      COPY,
      "打开 V2Box，进入「Configs」，点击右上角「+」，选择「Add Subscription」，名称填写「飞渡」，把订阅链接粘贴到「URL」，点击「Add」。",
    ],
    start: ["在「Configs」中选择一个节点，回到「Home」点击「Connect」，首次连接时允许添加 VPN 配置。"],
    tips: ["在「Configs」中下拉即可更新订阅。", xrayJson("V2Box"), UPDATE_WHEN_BROKEN, NO_SHARE],
  },
  "/streisand_for_ios": {
    requirement: "需要 iOS 15 或更高版本的 iPhone / iPad。",
    install: [APP_STORE, "在 App Store 搜索「Streisand」安装（免费）。"],
    oneClick: oneClick("Streisand"),
    manual: [
      COPY,
      "打开 Streisand，点击右上角「+」，选择「添加订阅」，名称填写「飞渡」，把订阅链接粘贴到「URL」，点击保存。",
    ],
    start: ["在首页选择一个节点，点击顶部开关连接，首次连接时允许添加 VPN 配置。"],
    tips: [
      "导入分流规则后，国内网站直接连接、其余网站走代理；需在手机上登录本站后点击下方按钮导入。",
      xrayJson("Streisand"),
      UPDATE_WHEN_BROKEN,
      NO_SHARE,
    ],
    routeImport: true,
  },
  "/quantumult_for_ios": {
    requirement: "需要 iOS 12 或更高版本的 iPhone / iPad。",
    install: [APP_STORE, "在 App Store 搜索「Quantumult」购买并安装（付费应用）。"],
    oneClick: ["Quantumult 不支持从浏览器一键导入，请使用第 3 步手动导入。"],
    manual: [
      COPY,
      "打开 Quantumult，进入「设置」→「订阅」，点击右上角「+」，选择「服务器」，名称填写「飞渡」，把订阅链接粘贴到「链接」，点击保存后下拉更新。",
    ],
    start: ["在首页选择一个节点，打开顶部开关，首次连接时允许添加 VPN 配置。"],
    tips: [UPDATE_WHEN_BROKEN, NO_SHARE],
  },
  "/quantumultx_for_ios": {
    requirement: "需要 iOS 13 或更高版本的 iPhone / iPad。",
    install: [APP_STORE, "在 App Store 搜索「Quantumult X」购买并安装（付费应用）。"],
    oneClick: [
      "一键导入只能在手机上进行：请用 iPhone 的 Safari 打开本站并登录。",
      ...oneClick("Quantumult X"),
    ],
    manual: [
      COPY,
      "打开 Quantumult X，点击右下角风车图标进入设置，在「节点」→「引用（订阅）」中点击右上角「+」，标签填写「飞渡」，把订阅链接粘贴到「资源路径」，点击右上角保存。",
    ],
    start: ["回到首页，长按右下角风车选择「规则分流」，打开右上角开关，首次连接时允许添加 VPN 配置。"],
    tips: [
      `一键导入的节点订阅每 ${QX_SERVER_UPDATE_SECONDS} 秒（2 天）自动更新，运营方设置了分流与重写规则时一并导入，规则每 ${QX_RULES_UPDATE_SECONDS} 秒（30 天）更新；也可在「引用（订阅）」中左滑选择「更新」。`,
      UPDATE_WHEN_BROKEN,
      NO_SHARE,
    ],
  },
  "/clash_for_macos": {
    requirement: "需要 macOS 10.14 或更高版本（Intel 与 Apple 芯片均可）。",
    install: ["下载 dmg 安装包，打开后把 ClashX 拖入「应用程序」，首次打开时允许安装辅助程序。"],
    oneClick: oneClick("ClashX"),
    manual: [
      COPY,
      "点击菜单栏的 ClashX 图标，选择「配置」→「托管配置」→「管理」，点击「添加」，把订阅链接粘贴到「Url」，名称填写「飞渡」，点击确定。",
      autoUpdate("在「托管配置」中打开「自动更新」，"),
    ],
    start: [
      "点击菜单栏的 ClashX 图标，勾选「设置为系统代理」，出站模式选择「规则」，在节点列表中选择一个节点。",
    ],
    tips: [UPDATE_WHEN_BROKEN, NO_SHARE],
  },
};

/** The guide's text at `route`, with the subscribe button it uses; undefined when none. */
export function guideContent(route: string): GuideContent | undefined {
  const content = CONTENT[route];
  const subscribe = subscribeClientFor(route);
  return content && subscribe ? { ...content, subscribe } : undefined;
}

export const GUIDE_CONTENT_ROUTES = Object.keys(CONTENT);
