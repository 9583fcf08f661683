/**
 * /admin_config (seed 001 §2.1): every setting, grouped in sections. 保存 sends only the changed
 * fields; 恢复 reloads what the server has. Secrets arrive as a mask and are kept while the mask
 * is left in place (the server ignores it).
 */
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { SERVER_TYPE_LABELS, SERVER_TYPES } from "../../../src/modules/node-record/schema.ts";
import {
  PAY_ACCOUNTS,
  SECRET_MASK,
  SECRET_SETTINGS,
  type SettingKey,
  type Settings,
  settingsPatchSchema,
} from "../../../src/modules/settings/schema.ts";
import type { PaymentsInForce } from "../../../src/payments/registry.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { AdminPage, LoadingSpinner } from "../../components/admin/AdminPage.tsx";
import { toastResult } from "../../components/admin/feedback.ts";
import { schemaErrors, useFormErrors } from "../../components/admin/formErrors.ts";
import { SelectField, SwitchField, TextAreaField } from "../../components/admin/inputs.tsx";
import { numberFrom } from "../../components/admin/numbers.tsx";
import { PaymentsInForceNote, sandboxVariableHint } from "../../components/admin/PaymentsInForce.tsx";
import { Field } from "../../components/Field.tsx";
import { TOAST_SHORT, toast } from "../../components/Toast.tsx";
import { WebhookSection } from "./Webhooks.tsx";

export const ConfigMsg = {
  saved: "更新成功",
  saveFailed: "配置失败",
  unchanged: "没有需要保存的修改",
} as const;

type PayAccount = (typeof PAY_ACCOUNTS)[number];
const PAY_ACCOUNT_LABEL: Record<PayAccount, string> = { "": "关闭", epay: "易支付 EPay", sandbox: "沙箱" };
const PAY_ACCOUNT_OPTIONS = PAY_ACCOUNTS.map((value) => ({ value, label: PAY_ACCOUNT_LABEL[value] }));

type Control =
  | { kind: "text"; placeholder?: string }
  | { kind: "number"; step?: string }
  | { kind: "switch" }
  | { kind: "payAccount" }
  | { kind: "secret" }
  | { kind: "list" }
  | { kind: "textarea" };

interface SettingField {
  key: SettingKey;
  label: string;
  hint?: string;
  control: Control;
}

const text = (key: SettingKey, label: string, hint?: string, placeholder?: string): SettingField => ({
  key,
  label,
  hint,
  control: { kind: "text", placeholder },
});
const number = (key: SettingKey, label: string, hint?: string, step = "any"): SettingField => ({
  key,
  label,
  hint,
  control: { kind: "number", step },
});
const toggle = (key: SettingKey, label: string, hint?: string): SettingField => ({
  key,
  label,
  hint,
  control: { kind: "switch" },
});
const secret = (key: SettingKey, label: string): SettingField => ({
  key,
  label,
  hint: `已设置时显示 ${SECRET_MASK}，不修改则保留原值`,
  control: { kind: "secret" },
});

interface Section {
  title: string;
  fields: SettingField[];
}

const PAY_SECTION = "支付";

/** The form's layout. Settings not listed here still appear, under 其他, by their type. */
const SECTIONS: Section[] = [
  {
    title: PAY_SECTION,
    fields: [
      { key: "alipay", label: "支付宝收款账户", control: { kind: "payAccount" } },
      { key: "wxpay", label: "微信收款账户", control: { kind: "payAccount" } },
      text("epay_url", "EPay 网关地址", "易支付兼容网关的地址", "https://pay.example.com"),
      text("epay_pid", "EPay 商户ID"),
      secret("epay_key", "EPay 密钥"),
      text("usdtpay", "USDT 收款地址 (TRC20)", "留空则关闭 USDT 支付"),
      number("exchange_rate", "汇率", "1 USDT 兑换的人民币元数"),
      number("usdtCheckTime", "USDT 检查总时长(分钟)", "10 到 60", "1"),
      number("usdtCheckInterval", "检查间隔(秒)", "3 到 3600", "1"),
      text("trongrid_url", "TronGrid 地址"),
      secret("trongrid_api_key", "TronGrid API key"),
      text(
        "notify_url",
        "异步通知地址",
        "支付网关回调的域名前缀；留空使用请求的域名",
        "https://notify.example.com",
      ),
      text(
        "return_url",
        "支付返回地址",
        "支付完成后返回的域名前缀；留空使用请求的域名",
        "https://www.example.com",
      ),
      toggle("sandbox_pay", "沙箱支付", "演示与测试用，不会真实扣款"),
      text(
        "channel_price_filter_code",
        "价格过滤渠道码",
        "带此渠道码的用户只能看到高于最低价格的商品；留空关闭",
      ),
      number("channel_price_filter_min", "价格过滤最低价格(元)"),
    ],
  },
  {
    title: "流量计费",
    fields: [
      number("traffic_spend_scale", "流量消耗倍率"),
      number("upload_traffic_spend_scale", "上传流量倍率"),
      number("minestTrafficSpend", "最低流量消耗"),
      toggle(
        "noGlobalTrafficScaleLimit",
        "不受全局倍率限制",
        "开启后按线路倍率 × 用户倍率计费，不再乘以上面两个全局倍率",
      ),
      number(
        "vip_traffic_thred_rate_limit",
        "VIP 限速(Mbps)",
        "时间套餐用户用当日额度时在节点上的限速（额度用完改用永久流量时不限速），0 为不限速；由 XrayR / V2bX 等 UniProxy 节点执行，飞渡自带节点程序不限速",
      ),
      number("updateV2rayDuration", "节点同步间隔(秒)", undefined, "1"),
      number("trafficStasticDuration", "流量统计间隔(秒)", undefined, "1"),
    ],
  },
  {
    title: "渠道返利",
    fields: [
      toggle("openChannel", "开放渠道"),
      number("channelRewardRate", "渠道返利比例", "0.05 到 0.5", "0.01"),
      number("channelConsumerDuration", "渠道消费有效期(天)", undefined, "1"),
      number("min_charge_money", "最低提现金额(元)"),
      { key: "inviteRule", label: "邀请规则", control: { kind: "textarea" } },
    ],
  },
  {
    title: "管理员与运营",
    fields: [
      { key: "admin_id", label: "管理员 ID 列表", hint: "每行一个用户 ID", control: { kind: "list" } },
      { key: "yunying_list", label: "运营 ID 列表", hint: "每行一个用户 ID", control: { kind: "list" } },
    ],
  },
  {
    title: "签到与抽奖",
    fields: [
      number("signUseRewardTraffic", "签到奖励流量(MB)", undefined, "1"),
      number("continueSignUseDay", "连续签到天数", undefined, "1"),
      number("continueSignReward", "连续签到奖励(MB)", undefined, "1"),
      number("prizeBaseCost", "抽奖基础消耗(G)", "每次抽奖扣除的永久流量；0 表示关闭抽奖"),
      number("gameSeat", "游戏座位", "抽奖转盘的格子数；0 表示每个奖品一格", "1"),
    ],
  },
  {
    title: "流量转赠",
    fields: [
      number("minPushNum", "最低转赠(G)", undefined, "1"),
      number("pushCostRate", "转赠手续费比例", "0 到 0.9；接收方得到 转赠量 ×（1 − 比例）", "0.01"),
    ],
  },
  {
    title: "安装脚本地址",
    fields: [
      text(
        "panel_url",
        "面板地址（节点连接用）",
        "节点下载程序和上报用的地址；留空则用当前后台的地址",
        "https://panel.example.com",
      ),
      // Labelled as the node form names the server types; the settings keep the seed's names.
      ...SERVER_TYPES.map((type) =>
        text(`install_${type}`, SERVER_TYPE_LABELS[type], undefined, "留空则用面板自带的脚本"),
      ),
    ],
  },
  {
    title: "域名与内容",
    fields: [
      text(
        "site_url",
        "站点地址",
        "本站对外的地址：邮件链接与支付回调只用它（留空则用首选域名）；两者都空时不发送邮件链接",
        "https://panel.example.com",
      ),
      text("preferDomain", "首选域名"),
      text("contentUrl_guonei", "国内内容地址"),
      text("contentUrl_guowai", "国外内容地址"),
      text("describe_host", "订阅域名"),
      text("agency_host", "代理站域名", "页面域名等于它时进入代理模式"),
      text(
        "apple_id_share_url",
        "共享 Apple ID 地址",
        "付费用户在「共享 Apple ID」页打开的地址，只发给已付费用户；留空则显示暂未开放",
        "https://share.example.com/apple-id",
      ),
      text(
        "qx_filter_url",
        "QuantumultX 分流规则地址",
        "一键导入 QuantumultX 时一并添加的分流规则（每 30 天更新）；留空则只导入节点订阅",
        "https://rules.example.com/qx/filter.list",
      ),
      text(
        "qx_rewrite_url",
        "QuantumultX 重写规则地址",
        "一键导入 QuantumultX 时一并添加的重写规则（每 30 天更新）；留空则不导入",
        "https://rules.example.com/qx/rewrite.conf",
      ),
      text("timezone", "时区", "签到、每日额度与统计按此时区分日", "Asia/Shanghai"),
    ],
  },
  {
    title: "公告弹窗",
    fields: [
      toggle("notice_show", "显示公告"),
      text("notice_title", "公告标题"),
      { key: "notice_content", label: "公告内容", control: { kind: "textarea" } },
      toggle("notice_mark_red", "标红"),
      number("notice_day_interval", "弹出间隔(天)", undefined, "1"),
      text("contact_info", "联系方式"),
      text("group_link", "群组链接"),
    ],
  },
  {
    title: "订阅信息头",
    fields: [
      toggle("sub_header_title", "订阅名称", "profile-title：客户端里订阅显示的名称"),
      toggle("sub_header_update_interval", "自动更新间隔", "profile-update-interval：每 24 小时更新一次订阅"),
      toggle("sub_header_userinfo", "流量信息", "subscription-userinfo：已用与剩余流量"),
      toggle("sub_header_expire", "套餐到期时间", "subscription-userinfo 的 expire：时间套餐的到期时间"),
      toggle("sub_header_support_url", "客服链接", "support-url：本站「问题反馈」页，需先设置站点地址"),
      toggle("sub_header_web_page", "网站链接", "profile-web-page-url：本站首页，需先设置站点地址"),
      toggle(
        "sub_header_announce",
        "公告",
        "announce：「显示公告」开启时把公告（前 200 字）发给 Happ、v2RayTun",
      ),
    ],
  },
  {
    title: "邮件发送 (SMTP)",
    fields: [
      text("smtp_host", "SMTP 服务器"),
      number("smtp_port", "SMTP 端口", undefined, "1"),
      toggle("smtp_secure", "SSL/TLS"),
      text("smtp_user", "SMTP 用户名"),
      secret("smtp_password", "SMTP 密码"),
      text("smtp_from", "发件人"),
    ],
  },
  {
    title: "Telegram 机器人",
    fields: [
      {
        ...secret("telegram_bot_token", "机器人令牌"),
        hint: `@BotFather 创建机器人后给出的令牌；留空关闭机器人。已设置时显示 ${SECRET_MASK}，不修改则保留原值`,
      },
      text(
        "telegram_api_base",
        "Bot API 地址",
        "默认 https://api.telegram.org；自建 Bot API 服务器时填它的地址",
        "https://api.telegram.org",
      ),
      toggle(
        "telegram_webhook",
        "使用 Webhook 接收消息",
        "关闭时用长轮询，无需公网地址；开启需站点地址为 https，端口 443/80/88/8443",
      ),
    ],
  },
  {
    title: "定时备份",
    fields: [
      number(
        "backup_hour",
        "备份时刻(点)",
        "每天到这个钟点（按上面的时区，0–23）后备份一次数据库到数据目录的 backups/；-1 关闭",
        "1",
      ),
      number("backup_keep", "保留份数", "只保留最近这么多天的备份，更早的自动删除", "1"),
      text(
        "backup_s3_endpoint",
        "S3 地址",
        "每天的备份另存一份到 S3 兼容存储（AWS S3、Cloudflare R2、MinIO 等）；留空则不上传",
        "https://s3.us-east-1.amazonaws.com",
      ),
      text("backup_s3_bucket", "S3 存储桶", undefined, "ferry-backups"),
      text("backup_s3_region", "S3 区域", "签名所用区域；Cloudflare R2 填 auto", "us-east-1"),
      text("backup_s3_access_key_id", "S3 Access Key ID"),
      secret("backup_s3_secret_access_key", "S3 Secret Access Key"),
      text("backup_s3_prefix", "S3 路径前缀", "对象名为 前缀 + ferry-日期.db.ferrybak", "ferry/"),
      toggle(
        "backup_s3_virtual_host",
        "虚拟主机风格",
        "开启时存储桶名放在域名里（https://桶.地址/对象）；关闭时用路径风格（地址/桶/对象），兼容性最好",
      ),
      number("backup_offbox_keep", "S3 保留份数", "S3 上只保留最近这么多天的定时备份", "1"),
      toggle(
        "backup_telegram",
        "发送到 Telegram",
        "把每天的备份文件发给已绑定机器人的管理员（需先设置机器人；超过 50 MB 的文件无法发送）",
      ),
      {
        ...secret("backup_passphrase", "加密口令"),
        hint: `至少 8 个字符。设置后上传和发送的备份以 AES-256-GCM 加密（密钥由口令经 scrypt 生成）；恢复时需要同一口令，丢失则无法恢复。已设置时显示 ${SECRET_MASK}，不修改则保留原值`,
      },
    ],
  },
  {
    title: "监控 (Prometheus)",
    fields: [
      {
        ...secret("metrics_token", "监控令牌"),
        hint: `Prometheus 抓取 /metrics 时带 Authorization: Bearer <令牌>；留空则只允许本机直接抓取（以 --trust-proxy 启动时须设置令牌）。已设置时显示 ${SECRET_MASK}，不修改则保留原值`,
      },
    ],
  },
  {
    title: "两步验证",
    fields: [
      toggle(
        "totp_required_staff",
        "管理员和运营必须开启两步验证",
        "开启后，admin 与 yunying 账号须先在「我的账户」开启两步验证，之后才能进行其他操作",
      ),
    ],
  },
];

/** A setting not laid out above gets a control from its value's type. */
function controlFor(key: SettingKey, value: unknown): Control {
  if (SECRET_SETTINGS.includes(key)) return { kind: "secret" };
  if (typeof value === "boolean") return { kind: "switch" };
  if (typeof value === "number") return { kind: "number", step: "any" };
  if (Array.isArray(value)) return { kind: "list" };
  return { kind: "text" };
}

/** Settings with a section of their own below the form (not fields of it): 配置管理 → Webhook. */
const OWN_SECTION_KEYS: readonly SettingKey[] = ["webhooks"];

function sectionsFor(settings: Settings): Section[] {
  const placed = new Set([
    ...OWN_SECTION_KEYS,
    ...SECTIONS.flatMap((section) => section.fields.map((field) => field.key)),
  ]);
  const rest = (Object.keys(settings) as SettingKey[])
    .filter((key) => !placed.has(key))
    .map((key) => ({ key, label: key, control: controlFor(key, settings[key]) }));
  return rest.length > 0 ? [...SECTIONS, { title: "其他", fields: rest }] : SECTIONS;
}

/** What the inputs hold: text for everything typed, booleans for switches. */
type Draft = Record<string, string | boolean>;

function toDraft(settings: Settings): Draft {
  const draft: Draft = {};
  for (const [key, value] of Object.entries(settings)) {
    if (OWN_SECTION_KEYS.includes(key as SettingKey)) continue;
    if (typeof value === "boolean") draft[key] = value;
    else if (Array.isArray(value)) draft[key] = value.join("\n");
    else draft[key] = String(value);
  }
  return draft;
}

/**
 * The fields that differ from `loaded`, typed like the settings; a number field not holding a
 * number is NaN, which settingsPatchSchema reports on the field (请输入数字).
 */
export function changedSettings(loaded: Settings, draft: Draft): Partial<Settings> {
  const patch: Record<string, unknown> = {};
  for (const [key, before] of Object.entries(loaded)) {
    if (OWN_SECTION_KEYS.includes(key as SettingKey)) continue;
    const input = draft[key];
    let value: unknown;
    if (typeof before === "boolean") value = input === true;
    else if (typeof before === "number") value = numberFrom(String(input ?? ""));
    else if (Array.isArray(before)) {
      value = String(input ?? "")
        .split(/[\n,，]/)
        .map((item) => item.trim())
        .filter(Boolean);
    } else value = String(input ?? "");
    if (JSON.stringify(value) !== JSON.stringify(before)) patch[key] = value;
  }
  return patch as Partial<Settings>;
}

function SettingInput({
  field,
  value,
  error,
  disabled,
  onChange,
}: {
  field: SettingField;
  value: string | boolean;
  error?: string;
  /** Shown but not changeable here (the sandbox turned on by its variable). */
  disabled?: boolean;
  onChange: (value: string | boolean) => void;
}) {
  const { control, label, hint } = field;
  switch (control.kind) {
    case "switch":
      return (
        <SwitchField
          label={label}
          hint={hint}
          checked={value === true}
          disabled={disabled}
          onChange={onChange}
        />
      );
    case "payAccount":
      return (
        <SelectField
          label={label}
          hint={hint}
          value={String(value) as PayAccount}
          options={PAY_ACCOUNT_OPTIONS}
          onChange={onChange}
        />
      );
    case "list":
    case "textarea":
      return (
        <TextAreaField
          label={label}
          hint={hint}
          error={error}
          className="admin-span"
          value={String(value)}
          rows={control.kind === "list" ? 3 : 4}
          onChange={onChange}
        />
      );
    default:
      return (
        <div className="admin-field">
          <Field
            label={label}
            type={control.kind === "number" ? "number" : control.kind === "secret" ? "password" : "text"}
            step={control.kind === "number" ? control.step : undefined}
            inputMode={control.kind === "number" ? "decimal" : undefined}
            autoComplete={control.kind === "secret" ? "new-password" : "off"}
            placeholder={control.kind === "text" ? control.placeholder : undefined}
            value={String(value)}
            error={error}
            onChange={(event) => onChange(event.target.value)}
          />
          {hint ? <p className="admin-hint">{hint}</p> : null}
        </div>
      );
  }
}

export function AdminConfigPage() {
  const [loaded, setLoaded] = useState<Settings | null>(null);
  const [failed, setFailed] = useState(false);
  const [draft, setDraft] = useState<Draft>({});
  // Checked with the server's schema before sending: the bad value is marked and focused.
  const { errors, formRef, check } = useFormErrors(ConfigMsg.saveFailed);
  const [busy, setBusy] = useState(false);
  const [payState, setPayState] = useState<PaymentsInForce | null>(null);

  const loadPayState = useCallback(async () => {
    const answer = await call("/api/admin/config/pay_status", {});
    if (answer.code === Code.ok) setPayState(answer.data);
  }, []);

  const load = useCallback(async () => {
    setBusy(true);
    const [answer] = await Promise.all([call("/api/admin/config/get", {}), loadPayState()]);
    setBusy(false);
    if (answer.code !== Code.ok) {
      setFailed(true);
      return;
    }
    setFailed(false);
    setLoaded(answer.data);
    setDraft(toDraft(answer.data));
    check({});
  }, [loadPayState, check]);

  useEffect(() => {
    void load();
  }, [load]);

  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (!loaded || busy) return;
    const patch = changedSettings(loaded, draft);
    if (!check(schemaErrors(settingsPatchSchema, patch))) return;
    if (Object.keys(patch).length === 0) {
      toast.info(ConfigMsg.unchanged, TOAST_SHORT);
      return;
    }
    setBusy(true);
    const answer = await call("/api/admin/config/set_config", patch);
    setBusy(false);
    if (toastResult(answer, ConfigMsg.saved, ConfigMsg.saveFailed)) {
      setLoaded(answer.data);
      setDraft(toDraft(answer.data));
      void loadPayState();
    }
  };

  const sandboxHint = sandboxVariableHint(payState);
  if (failed && !loaded) return <AdminPage title="配置管理">{null}</AdminPage>;
  if (!loaded) {
    return (
      <AdminPage title="配置管理">
        <LoadingSpinner />
      </AdminPage>
    );
  }
  return (
    <AdminPage title="配置管理">
      <form ref={formRef} className="admin-config" onSubmit={save} noValidate>
        {sectionsFor(loaded).map((section) => (
          <fieldset key={section.title} className="card admin-section">
            <legend className="card-title admin-section-title">{section.title}</legend>
            <div className="admin-grid">
              {section.title === PAY_SECTION ? <PaymentsInForceNote state={payState} /> : null}
              {section.fields.map((field) => {
                // The variable's sandbox is on whatever the setting says: show that, not the setting.
                const byVariable = field.key === "sandbox_pay" && sandboxHint !== undefined;
                return (
                  <SettingInput
                    key={field.key}
                    field={byVariable ? { ...field, hint: sandboxHint } : field}
                    value={byVariable ? true : (draft[field.key] ?? "")}
                    error={errors[field.key]}
                    disabled={byVariable}
                    onChange={(value) => setDraft((current) => ({ ...current, [field.key]: value }))}
                  />
                );
              })}
            </div>
          </fieldset>
        ))}
        <div className="admin-savebar">
          <button type="button" className="btn" disabled={busy} onClick={() => void load()}>
            恢复
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            保存
          </button>
        </div>
      </form>
      <WebhookSection initial={loaded.webhooks} />
    </AdminPage>
  );
}
