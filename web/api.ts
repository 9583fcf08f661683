/**
 * The one envelope client (DESIGN §5): POST JSON `{data: base64(payload)}` with credentials,
 * answer `{data: base64({code, data, msg})}`. Network failures become code 502 with a toast;
 * code 1002 (session expired) toasts and sends the visitor to /#/login after 2 s.
 */
import type { z } from "zod";
import type { ReplicaView } from "../src/cluster/schema.ts";
import type { Agency, AgencyCustomers, AllocateResult } from "../src/modules/agency/schema.ts";
import type { AppleIdShareLink } from "../src/modules/appleid/schema.ts";
import type { AuditListInput, AuditPage } from "../src/modules/audit/schema.ts";
import type {
  Channel,
  ChannelInfo,
  InvitedUsers,
  RewardList,
  UpdateChannelInput,
} from "../src/modules/channel/schema.ts";
import type { Combo } from "../src/modules/combo/schema.ts";
import type {
  Coupon,
  CouponUseRecord,
  couponBatchInput,
  couponInput,
  RedeemResult,
} from "../src/modules/coupon/schema.ts";
import type { DeviceLimit, DeviceList, SetDeviceLimitInput } from "../src/modules/device/schema.ts";
import type { Entry, entryInput } from "../src/modules/entry/schema.ts";
import type { ErrorRecord } from "../src/modules/errors/service.ts";
import type { Ticket } from "../src/modules/feedback/schema.ts";
import type { AgentLine, lineInput } from "../src/modules/line/schema.ts";
import type { UpgradeResult } from "../src/modules/node-api/upgrade.ts";
import type { Agent, agentInput, NodeAnomaly, PublicAgent } from "../src/modules/node-record/schema.ts";
import type { Notice } from "../src/modules/notice/schema.ts";
import type {
  Order,
  OrderDetail,
  OrderFilter,
  OrderListPage,
  PayMode,
  PayResult,
  Trade,
  TradeStatus,
} from "../src/modules/order/schema.ts";
import type { PermissionItem } from "../src/modules/permission/schema.ts";
import type {
  DrawBoard,
  DrawResult,
  MyDraw,
  Prize,
  PrizeList,
  prizeInput,
} from "../src/modules/prize/schema.ts";
import type { Push, PushList } from "../src/modules/push/schema.ts";
import type { HostInfo, Settings } from "../src/modules/settings/schema.ts";
import type { SignUseInfo, SignUseResult } from "../src/modules/signuse/schema.ts";
import type { BasicStastic } from "../src/modules/stats/schema.ts";
import type { BindInfo } from "../src/modules/telegram/schema.ts";
import type { AllTrafficRecords, AllTrafficRecordsInput } from "../src/modules/traffic/admin-schema.ts";
import type { ReconcileDay } from "../src/modules/traffic/reconcile-schema.ts";
import type { TrafficRecord, trafficRecordsInput } from "../src/modules/traffic/schema.ts";
import type {
  AdminChangePasswordInput,
  AdminUser,
  UpdateUserInput,
  UserListInput,
} from "../src/modules/user/admin-schema.ts";
import type { ChangeUseInfoInput, PermissionGrant, UserInfo } from "../src/modules/user/schema.ts";
import type { PasskeyCreationOptions, TotpSetup, TotpStatus } from "../src/modules/user/two-factor-schema.ts";
import type {
  AddressType,
  AdminWallet,
  Charge,
  SpendEntry,
  Wallet,
  Withdrawal,
  WithdrawalStatus,
} from "../src/modules/wallet/schema.ts";
import type { WebhookLog, WebhookTestResult, webhookLogInput } from "../src/modules/webhook/schema.ts";
import type { PaymentsInForce } from "../src/payments/registry.ts";
import { Code } from "../src/rpc/codes.ts";
import { type Answer, fromBase64Json, toBase64Json } from "../src/rpc/envelope.ts";
import { TOAST_SHORT, toast } from "./components/Toast.tsx";
import { go } from "./lib/nav.ts";

export type { Answer };

/** The page a staff account is kept on while two-factor login is mandatory and not on. */
export const TWO_FACTOR_PATH = "/two_factor";

export const NETWORK_ERROR_TOAST = "网络错误，请稍后重试";
export const NETWORK_ERROR_MSG = "网络错误";
export const SESSION_EXPIRED_TOAST = "登录过期，请登录";
const SESSION_EXPIRED_DELAY_MS = 2000;

type Empty = Record<string, never>;

/** Payload and answer data of each call the SPA makes. Later pages add their calls here. */
export interface CallMap {
  "/api/user/login": { input: { email: string; password: string }; output: UserInfo };
  "/api/user/signup": {
    input: { email: string; password: string; icon_url: string; host: string };
    output: UserInfo;
  };
  "/api/user/userinfo": { input: Empty; output: UserInfo };
  "/api/user/logout": { input: Empty; output: null };
  "/api/user/get_email": { input: { describUrl: string }; output: string };
  "/api/user/reset_password": {
    input: { email: string; password: string; describUrl: string };
    output: { email: string };
  };
  "/api/permission/mypermissions": { input: Empty; output: PermissionGrant[] };
  "/api/user_notive/list": { input: Empty; output: Notice[] };
  "/api/user_notive/clicked": { input: { noticeId: string }; output: null };
  "/api/host/get": { input: Empty; output: HostInfo };
  // shop and orders (seed 000 §7)
  "/api/shop/list": { input: Empty; output: Combo[] };
  "/api/shop/pay_modes": { input: Empty; output: PayMode[] };
  "/api/shop/create_order": { input: { combo_id: string }; output: Order };
  "/api/coupon/orderUseCoupon": { input: { order_id: string; code: string }; output: Order };
  "/api/coupon/orderCancleCoupon": { input: { order_id: string }; output: Order };
  "/api/coupon/redeem_coupon": { input: { code: string }; output: RedeemResult };
  "/api/shop/wallet_check": { input: { order_id: string }; output: Order };
  "/api/shop/dobuy": {
    input: { order_id: string; pay_mode: PayMode; isMobile: boolean; return_url: string };
    output: PayResult;
  };
  "/api/shop/trade_status": { input: { trade_id: string }; output: TradeStatus };
  "/api/order/order_list": {
    input: { page: number; pageSize: number; filter: OrderFilter };
    output: OrderListPage;
  };
  "/api/order/cancel_order": { input: { order_id: string }; output: Order };
  "/api/order/feedback": { input: { order_id: string; msg: string }; output: Order };
  // back office (seed 001 §7)
  "/api/admin/config/get": { input: Empty; output: Settings };
  "/api/admin/config/set_config": { input: Partial<Settings>; output: Settings };
  "/api/admin/config/pay_status": { input: Empty; output: PaymentsInForce };
  "/api/admin/combo/list": { input: Empty; output: Combo[] };
  "/api/admin/combo/update_combo": { input: ComboForm; output: Combo };
  "/api/admin/combo/delete_combo": { input: { id: string }; output: null };
  "/api/admin/permissions/list": { input: Empty; output: PermissionItem[] };
  "/api/admin/permissions/update": {
    input: { _id?: string; name: string; desc: string };
    output: PermissionItem;
  };
  "/api/admin/permissions/delete": { input: { id: string }; output: null };
  "/api/admin/trades/tradelist": { input: { requestNumber: number; filterStr: string }; output: Trade[] };
  "/api/admin/trades/get_order_for_trade": { input: { order_id: string }; output: OrderDetail };
  // nodes, entries, lines and subscriptions (issue 4)
  "/api/agent/agent_list": { input: Empty; output: PublicAgent[] };
  "/api/user/reset_userkey": { input: Empty; output: { userkey: string } };
  "/api/user/ssr_lines": { input: Empty; output: { lines: number } };
  "/api/user/change_use_info": { input: ChangeUseInfoInput; output: UserInfo };
  "/api/admin/agents/list": { input: Empty; output: Agent[] };
  "/api/admin/agents/update": { input: AgentForm; output: Agent };
  "/api/admin/agents/delete": { input: { id: string }; output: null };
  "/api/admin/entrys/list": { input: Empty; output: Entry[] };
  "/api/admin/entrys/update": { input: EntryForm; output: Entry };
  "/api/admin/entrys/delete": { input: { id: string }; output: null };
  "/api/admin/agent_line/list": { input: { agentID?: string }; output: AgentLine[] };
  "/api/admin/agent_line/update": { input: LineForm; output: AgentLine };
  "/api/admin/agent_line/delete_agent": { input: { id: string }; output: null };
  "/api/admin/agent_line/reset_hot": { input: Empty; output: { count: number } };
  // traffic records (issue 5)
  "/api/traffic/my_traffic_records": {
    input: z.input<typeof trafficRecordsInput>;
    output: TrafficRecord[];
  };
  // node install and upgrade (issue 5)
  "/api/admin/agents/upgrade_agentserver": { input: Agent; output: UpgradeResult };
  "/api/admin/agents/manual_update_agent": { input: { agentid: string }; output: { cmd: string } };
  "/api/admin/agents/clear_updatetimes": { input: Empty; output: null };
  "/api/admin/agents/anomalies": { input: { id: string }; output: NodeAnomaly[] };
  // 节点管理 → 对账 (issue 32)
  "/api/admin/agents/reconcile": { input: { id: string }; output: ReconcileDay[] };
  // profile: the Telegram bind section (issue 13)
  "/api/user/bind_info": { input: Empty; output: BindInfo };
  "/api/user/unbind": { input: Empty; output: null };
  "/api/user/devices": { input: Empty; output: DeviceList };
  "/api/user/remove_device": { input: { hwid: string }; output: null };
  // tickets (issue 13)
  "/api/feedback/my_list": { input: Empty; output: Ticket[] };
  "/api/feedback/create": { input: { title: string; desc: string; imageUrl: string }; output: Ticket };
  "/api/feedback/response": { input: { id: string; desc: string; imageUrl: string }; output: Ticket };
  "/api/feedback/close": { input: { id: string }; output: Ticket };
  "/api/feedback/refresh": { input: { id: string }; output: Ticket };
  // shared Apple ID (issue 17): the link, for paying customers only
  "/api/apple_id/share_link": { input: Empty; output: AppleIdShareLink };
  // client guides (issue 17): the catalog paths present in <data>/guide/
  "/api/guide/files": { input: Empty; output: string[] };
  // traffic transfers (issue 14 §5): amounts in G
  "/api/push/list": { input: Empty; output: PushList };
  "/api/push/create": { input: { pushNumber: number }; output: Push };
  "/api/push/receive": { input: { code: string }; output: Push };
  "/api/push/cancel": { input: { code: string }; output: Push };
  // coupon manager and records (issue 14)
  "/api/yunying/coupon/coupon_list": { input: Empty; output: Coupon[] };
  "/api/yunying/coupon/update_coupon": { input: CouponForm; output: Coupon };
  "/api/yunying/coupon/batch_create": { input: CouponBatchForm; output: Coupon[] };
  "/api/yunying/coupon/delete_coupon": { input: { id_list: string[] }; output: { deleted: number } };
  "/api/yunying/coupon/coupon_record_list": { input: { limit: number }; output: CouponUseRecord[] };
  // lucky draw (issue 14 §4)
  "/api/yunying/prize/list": { input: Empty; output: PrizeList };
  "/api/yunying/prize/update": { input: z.input<typeof prizeInput>; output: Prize };
  "/api/yunying/prize/delete": { input: { id: string }; output: null };
  "/api/prize/board": { input: Empty; output: DrawBoard };
  "/api/prize/draw": { input: Empty; output: DrawResult };
  "/api/prize/my_draws": { input: Empty; output: MyDraw[] };
  // daily check-in (issue 14)
  "/api/user/sign_use": { input: Empty; output: SignUseResult };
  "/api/user/sign_use_info": { input: Empty; output: SignUseInfo };
  // back-office statistics (issue 16 §2): traffic in G, money in yuan
  "/api/admin/users/basic_stastic": { input: { num?: number }; output: BasicStastic };
  // the wallet and USDT withdrawals (issue 15 §4, §5): money in yuan
  "/api/wallet/mywallet": { input: Empty; output: Wallet };
  "/api/wallet/change_reward_adress": {
    input: { addressType: AddressType; address: string };
    output: Wallet;
  };
  "/api/wallet/make_charge": { input: Empty; output: Withdrawal };
  "/api/wallet/charge_list": { input: Empty; output: Withdrawal[] };
  "/api/wallet/spend_list": { input: Empty; output: SpendEntry[] };
  "/api/admin/charge/charge_list": { input: { status?: WithdrawalStatus }; output: Charge[] };
  "/api/admin/charge/checkout_charge": { input: { charge_id: string; txid?: string }; output: Charge };
  "/api/admin/charge/wallet": { input: { uid: string }; output: AdminWallet };
  "/api/admin/charge/message": { input: { charge_id: string; msg: string }; output: Charge };
  "/api/admin/charge/refuse_charge": { input: { charge_id: string; reason: string }; output: Charge };
  // referral channels (issue 15 §1–§3): money in yuan
  "/api/channel/channel_info": { input: Empty; output: ChannelInfo };
  "/api/channel/invited_users": { input: Empty; output: InvitedUsers };
  "/api/channel/reward_list": { input: Empty; output: RewardList };
  "/api/admin/users/get_user_channel": { input: { user_id: string }; output: Channel | null };
  "/api/admin/users/update_channel": { input: UpdateChannelInput; output: Channel };
  // all traffic records, the error log and agencies (issue 16 §3–§5): traffic in bytes
  "/api/admin/traffic_spend/traffic_records": { input: AllTrafficRecordsInput; output: AllTrafficRecords };
  "/api/admin/errors/list": { input: { num?: number }; output: ErrorRecord[] };
  "/api/admin/errors/clear": { input: Empty; output: { deletedCount: number } };
  // 集群状态 on 运维日志 (issue 28): the replicas and the leases each holds
  "/api/admin/replicas": { input: Empty; output: ReplicaView[] };
  // 操作日志 (issue 30): the audit trail, paged on the server
  "/api/admin/audit/list": { input: AuditListInput; output: AuditPage };
  // 配置管理 → Webhook (issue 30 §3): the delivery log and 发送测试
  "/api/admin/webhooks/log": { input: z.input<typeof webhookLogInput>; output: WebhookLog };
  "/api/admin/webhooks/test": { input: { id: string }; output: WebhookTestResult };
  "/api/admin/agency/list": { input: Empty; output: Agency[] };
  "/api/agency/customers": { input: Empty; output: AgencyCustomers };
  "/api/agency/allocate": {
    input: { email?: string; customer_id?: string; trafficG: number };
    output: AllocateResult;
  };
  // user management (issue 16 §1)
  "/api/admin/users/userlist": { input: UserListInput; output: AdminUser[] };
  "/api/admin/users/user": { input: { uid: string }; output: AdminUser };
  "/api/admin/users/update_user": { input: UpdateUserInput; output: AdminUser };
  "/api/admin/users/change_password": { input: AdminChangePasswordInput; output: null };
  "/api/admin/users/devices": { input: { uid: string }; output: DeviceList };
  "/api/admin/users/remove_devices": { input: { uid: string; hwid?: string }; output: DeviceList };
  "/api/admin/users/set_device_limit": { input: SetDeviceLimitInput; output: DeviceLimit };
  // two-factor login (issue 30)
  "/api/user/login_totp": { input: { challenge: string; code: string }; output: UserInfo };
  "/api/user/totp_status": { input: Empty; output: TotpStatus };
  "/api/user/totp_setup": { input: Empty; output: TotpSetup };
  "/api/user/totp_enable": { input: { code: string }; output: { recoveryCodes: string[] } };
  "/api/user/totp_disable": { input: { code: string }; output: null };
  "/api/user/passkey_options": { input: Empty; output: PasskeyCreationOptions };
  "/api/user/passkey_add": { input: { clientDataJSON: string; attestationObject: string }; output: null };
  "/api/user/login_passkey": {
    input: {
      challenge: string;
      credentialId: string;
      clientDataJSON: string;
      authenticatorData: string;
      signature: string;
    };
    output: UserInfo;
  };
}

/** What the node form sends: the wire fields without the server-made ones; empty password keeps it. */
export type AgentForm = z.input<typeof agentInput>;
export type EntryForm = z.input<typeof entryInput>;
export type LineForm = z.input<typeof lineInput>;

/** What the coupon form sends: wire fields (traffic as trafficG), no id when new. */
export type CouponForm = z.input<typeof couponInput>;
export type CouponBatchForm = z.input<typeof couponBatchInput>;

/** What the combo form sends: a combo without its id when new. */
export type ComboForm = Omit<Combo, "_id" | "limit"> & { _id?: string; limit?: number };

export type CallPath = keyof CallMap;

export interface CallOptions {
  /** Code 1002 is returned without the toast and the redirect (the start-up user-info probe). */
  quiet?: boolean;
}

/** The event the session store listens to when the server says the session is gone. */
export const SESSION_EXPIRED_EVENT = "ferry:session-expired";

let expiryPending = false;

/** Code 1002 from any call or upload: the session store forgets the user, a toast, /login after 2 s. */
export function onSessionExpired() {
  window.dispatchEvent(new Event(SESSION_EXPIRED_EVENT));
  if (expiryPending) return;
  expiryPending = true;
  toast.error(SESSION_EXPIRED_TOAST, SESSION_EXPIRED_DELAY_MS);
  setTimeout(() => {
    expiryPending = false;
    go("/login");
  }, SESSION_EXPIRED_DELAY_MS);
}

function networkFailure<T>(): Answer<T> {
  toast.error(NETWORK_ERROR_TOAST, TOAST_SHORT);
  return { code: Code.network, data: null as T, msg: NETWORK_ERROR_MSG };
}

/** Calls any envelope path; prefer the typed `call` for paths listed in CallMap. */
export async function callRaw<T = unknown>(
  path: string,
  payload: unknown = {},
  options: CallOptions = {},
): Promise<Answer<T>> {
  let body: unknown;
  try {
    const response = await fetch(path, {
      method: "POST",
      credentials: "include",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ data: toBase64Json(payload) }),
    });
    if (!response.ok) return networkFailure<T>();
    body = await response.json();
  } catch {
    return networkFailure<T>();
  }
  const data = (body as { data?: unknown } | null)?.data;
  if (typeof data !== "string") return networkFailure<T>();
  const decoded = fromBase64Json(data);
  if (!decoded.ok || typeof decoded.value !== "object" || decoded.value === null) return networkFailure<T>();
  const answer = decoded.value as Answer<T>;
  if (answer.code === Code.notLoggedIn && !options.quiet) onSessionExpired();
  // Two-factor login is mandatory for this staff account and it has not enrolled (issue 30).
  if (answer.code === Code.totpEnrolmentNeeded) go(TWO_FACTOR_PATH, { replace: true });
  return answer;
}

export function call<P extends CallPath>(
  path: P,
  payload: CallMap[P]["input"],
  options?: CallOptions,
): Promise<Answer<CallMap[P]["output"]>> {
  return callRaw<CallMap[P]["output"]>(path, payload, options);
}

/** A plain GET answering JSON (the confirm links); null on network failure (toast shown). */
export async function getJson<T>(url: string): Promise<T | null> {
  try {
    const response = await fetch(url, { credentials: "include" });
    if (!response.ok) throw new Error(String(response.status));
    return (await response.json()) as T;
  } catch {
    toast.error(NETWORK_ERROR_TOAST, TOAST_SHORT);
    return null;
  }
}
