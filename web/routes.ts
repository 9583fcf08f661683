/**
 * Every route of seed 000 §2 and seed 001 §2 with its page title, plus the header tabs with the
 * roles allowed to see them. Pages not built yet are still listed: they show the not-found view.
 */
import type { Role } from "../src/modules/user/schema.ts";

export const SITE_NAME = "飞渡";
/** The fixed default logo sent as icon_url on sign-up, and the avatar fallback (the server's too). */
export { DEFAULT_ICON } from "../src/modules/user/constants.ts";
export const DEFAULT_DESCRIPTION = "飞渡：安全、快速、稳定、低延迟的网络传输服务，邀请返利福利计划";

export interface RouteInfo {
  title: string;
  description?: string;
  /** Needs a logged-in user; visitors are sent to /login. */
  auth?: boolean;
  /** A client guide: rendered by the lazily loaded guide page over src/modules/guide/catalog.ts. */
  guide?: boolean;
}

const guide = (client: string, platform: string): RouteInfo => ({
  guide: true,
  title: `${client} ${platform} 使用教程`,
  description: `${client} ${platform} 客户端下载、一键导入订阅、手动导入与使用说明`,
});

export const ROUTES: Record<string, RouteInfo> = {
  "/": { title: "使用教程", description: "飞渡使用教程：选择平台与客户端，一键导入订阅即可使用" },
  "/tutorial": { title: "使用教程", description: "飞渡使用教程：选择平台与客户端，一键导入订阅即可使用" },
  "/login": { title: "登录" },
  "/register": { title: "注册" },
  "/confirm": { title: "邮箱确认" },
  "/reset": { title: "找回密码" },
  "/shop": { title: "商店" },
  "/order": { title: "订单记录" },
  "/orderinfo": { title: "订单详情" },
  "/checkout": { title: "结算" },
  "/channel": { title: "邀请返利" },
  "/wallet": { title: "钱包" },
  "/agents": { title: "节点列表" },
  "/push": { title: "流量转赠" },
  "/feedback": { title: "问题反馈" },
  "/traffic_records": { title: "流量记录" },
  "/apple_id_share": { title: "共享 Apple ID" },
  "/apple_id_signup_guide": { title: "注册非大陆 Apple ID 教程" },
  "/windows_errors": { title: "常见问题" },
  "/clash_for_windows": guide("Clash", "Windows"),
  "/clash_for_android": guide("Clash", "Android"),
  "/clash_meta_for_android": guide("Clash Meta", "Android"),
  "/flclash_for_android": guide("FLClash", "Android"),
  "/v2rayng_for_android": guide("v2rayNG", "Android"),
  "/v2rayng_for_windows": guide("v2rayN", "Windows"),
  "/flclash_for_pc": guide("FLClash", "Windows / macOS"),
  "/ss_for_ios": guide("Shadowrocket", "iOS"),
  "/singbox_for_ios": guide("SingBox", "iOS"),
  "/singbox_for_mac": guide("SingBox", "macOS"),
  "/singbox_for_android": guide("SingBox", "Android"),
  "/singbox_for_win": guide("SingBox", "Windows"),
  "/v2box_for_ios": guide("V2Box", "iOS"),
  "/streisand_for_ios": guide("Streisand", "iOS"),
  "/quantumult_for_ios": guide("Quantumult", "iOS"),
  "/quantumultx_for_ios": guide("QuantumultX", "iOS"),
  "/clash_for_macos": guide("Clash", "macOS"),
  "/user_info": { title: "我的账户", auth: true },
  "/two_factor": { title: "两步验证", auth: true },
  "/lucky_draw": { title: "幸运抽奖", auth: true },
  "/agency": { title: "代理中心", auth: true },
  // back office (seed 001 §2)
  "/admin_stastic": { title: "统计", auth: true },
  "/admin_coupon": { title: "优惠券管理", auth: true },
  "/coupon_records": { title: "优惠券记录", auth: true },
  "/admin_config": { title: "配置管理", auth: true },
  "/admin_userlist": { title: "用户管理", auth: true },
  "/all_traffic_records": { title: "全部流量记录", auth: true },
  "/admin_tradeList": { title: "交易流水管理", auth: true },
  "/admin_charge": { title: "提现管理", auth: true },
  "/admin_combos": { title: "商品管理", auth: true },
  "/admin_permissions": { title: "权限管理", auth: true },
  "/admin_entrys": { title: "入口管理", auth: true },
  "/admin_agents": { title: "节点管理", auth: true },
  "/admin_agentLines": { title: "线路管理", auth: true },
  "/admin_prize": { title: "抽奖管理", auth: true },
  "/admin_error": { title: "运维日志", auth: true },
  "/admin_audit": { title: "操作日志", auth: true },
};

/** Who is looking: a role, or "none" for a visitor (the seeds' "no type"). */
export type Viewer = Role | "none";

export interface Tab {
  path: string;
  label: string;
  roles: readonly Viewer[];
  /** Shown in agency mode. Cells the seed leaves "not stated" are hidden (the safe choice). */
  agency: boolean;
  /** Shown only to agency owners (userinfo agencyOwner). */
  ownersOnly?: boolean;
}

const LOGGED_IN: readonly Viewer[] = ["admin", "normal", "channel", "yunying"];
const EVERYONE: readonly Viewer[] = ["admin", "none", "normal", "channel", "yunying"];
const NO_NORMAL: readonly Viewer[] = ["admin", "none", "channel", "yunying"];

/** Seed 000 §2 header table, then seed 001 §2 back-office tabs, in that order. */
export const TABS: readonly Tab[] = [
  { path: "/", label: "使用教程", roles: EVERYONE, agency: true },
  { path: "/shop", label: "商店", roles: EVERYONE, agency: false },
  { path: "/agents", label: "节点列表", roles: EVERYONE, agency: true },
  { path: "/channel", label: "邀请返利", roles: NO_NORMAL, agency: false },
  { path: "/order", label: "订单记录", roles: LOGGED_IN, agency: false },
  { path: "/traffic_records", label: "流量记录", roles: LOGGED_IN, agency: true },
  { path: "/wallet", label: "钱包", roles: NO_NORMAL, agency: false },
  { path: "/windows_errors", label: "常见问题", roles: LOGGED_IN, agency: false },
  { path: "/feedback", label: "问题反馈", roles: LOGGED_IN, agency: false },
  { path: "/push", label: "流量转赠", roles: LOGGED_IN, agency: false },
  { path: "/user_info", label: "我的账户", roles: LOGGED_IN, agency: true },
  { path: "/agency", label: "代理中心", roles: LOGGED_IN, agency: true, ownersOnly: true },
  { path: "/admin_stastic", label: "统计", roles: ["admin"], agency: false },
  { path: "/admin_coupon", label: "优惠券管理", roles: ["admin", "yunying"], agency: false },
  { path: "/coupon_records", label: "优惠券记录", roles: ["admin", "yunying"], agency: false },
  { path: "/admin_config", label: "配置管理", roles: ["admin"], agency: false },
  { path: "/admin_userlist", label: "用户管理", roles: ["admin"], agency: false },
  { path: "/all_traffic_records", label: "全部流量记录", roles: ["admin"], agency: false },
  { path: "/admin_tradeList", label: "交易流水管理", roles: ["admin"], agency: false },
  { path: "/admin_charge", label: "提现管理", roles: ["admin"], agency: false },
  { path: "/admin_combos", label: "商品管理", roles: ["admin"], agency: false },
  { path: "/admin_permissions", label: "权限管理", roles: ["admin"], agency: false },
  { path: "/admin_entrys", label: "入口管理", roles: ["admin"], agency: false },
  { path: "/admin_agents", label: "节点管理", roles: ["admin"], agency: false },
  { path: "/admin_agentLines", label: "线路管理", roles: ["admin"], agency: false },
  { path: "/admin_prize", label: "抽奖管理", roles: ["admin", "yunying"], agency: false },
  { path: "/admin_error", label: "运维日志", roles: ["admin"], agency: false },
  { path: "/admin_audit", label: "操作日志", roles: ["admin"], agency: false },
];

export function visibleTabs(viewer: Viewer, agency: boolean, agencyOwner = false): Tab[] {
  return TABS.filter(
    (tab) => tab.roles.includes(viewer) && (!agency || tab.agency) && (!tab.ownersOnly || agencyOwner),
  );
}

/** The tab to highlight: "/tutorial" is the home tab. */
export function activeTabPath(path: string): string {
  return path === "/tutorial" ? "/" : path;
}
