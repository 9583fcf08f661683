/**
 * /admin_userlist (seed 001 §2.5): the newest users (count, free text over e-mail / channel code /
 * id, sign-up dates), every column of the list, and per row 渠道 (the user's channel, a random
 * 6-character code), 编辑 (the account's flags and an 调整余额 of traffic, days and wallet with a
 * reason), 修改密码, 调试订阅 (the user's own import links) and 设备 (UserDevices.tsx).
 */
import { type FormEvent, useEffect, useState } from "react";
import { formatYuan, yuanToFen } from "../../../src/lib/money.ts";
import { formatGB } from "../../../src/lib/traffic.ts";
import {
  CHANNEL_CODE_LENGTH,
  type Channel,
  MAX_REWARD_RATE,
  updateChannelInput,
} from "../../../src/modules/channel/schema.ts";
import {
  type AdminUser,
  AdminUserMsg,
  adjustmentInput,
  DEFAULT_USER_LIST_COUNT,
  type UserListInput,
  updateUserInput,
  userListInput,
} from "../../../src/modules/user/admin-schema.ts";
import { transformPassword } from "../../../src/modules/user/password.ts";
import { NO_CHANNEL_CODE, PASSWORD_MIN } from "../../../src/modules/user/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { AdminPage, AdminTable, LoadingSpinner } from "../../components/admin/AdminPage.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { toastFailure, toastResult } from "../../components/admin/feedback.ts";
import { SearchButton } from "../../components/admin/filters.tsx";
import { schemaErrors, useFormErrors } from "../../components/admin/formErrors.ts";
import { SwitchField } from "../../components/admin/inputs.tsx";
import { NumberField, numberFrom } from "../../components/admin/numbers.tsx";
import { useDraftForm } from "../../components/admin/useDraftForm.ts";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { Dialog } from "../../components/Dialog.tsx";
import { Field } from "../../components/Field.tsx";
import { formatDateTime } from "../../components/format.ts";
import { type SubscribeClient, userSubscriptionUrl } from "../../components/subscribe/clients.ts";
import { type DeepLinkKind, importLink } from "../../components/subscribe/deepLinks.ts";
import type { Column } from "../../components/Table.tsx";
import { SITE_NAME } from "../../routes.ts";
import { useSession } from "../../session.ts";
import { UserDevicesDialog } from "./UserDevices.tsx";
import { dayBound, draftToUpdate, randomChannelCode, type UserDraft, userToDraft } from "./userForm.ts";

const channelText = (code: string) => (code && code.toLowerCase() !== NO_CHANNEL_CODE ? code : "无");
const timeText = (ms: number) => (ms ? formatDateTime(ms) : "-");

// ---- 渠道 ----

interface ChannelDraft {
  name: string;
  code: string;
  rewardRate: string;
  comsumerDuration: string;
}

function ChannelDialog({ user, onClose }: { user: AdminUser; onClose: () => void }) {
  const [draft, setDraft] = useState<ChannelDraft | null>(null);
  const { errors, formRef, check } = useFormErrors(AdminUserMsg.channelFailed);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let current = true;
    void call("/api/admin/users/get_user_channel", { user_id: user._id }).then((answer) => {
      if (!current) return;
      if (answer.code !== Code.ok) {
        toastFailure(answer, AdminUserMsg.channelFailed);
        onClose();
        return;
      }
      const channel: Channel | null = answer.data;
      setDraft({
        name: channel?.name ?? "",
        code: channel?.code ?? "",
        rewardRate: channel ? String(channel.rewardRate) : "",
        comsumerDuration: channel ? String(channel.comsumerDuration) : "",
      });
    });
    return () => {
      current = false;
    };
  }, [user._id, onClose]);

  const set = (key: keyof ChannelDraft, value: string) => draft && setDraft({ ...draft, [key]: value });

  const save = async () => {
    if (!draft) return;
    const payload = {
      email: user.email,
      name: draft.name.trim(),
      code: draft.code.trim(),
      // Blank: the settings' default (a new channel) or the current value.
      ...(draft.rewardRate.trim() ? { rewardRate: numberFrom(draft.rewardRate) } : {}),
      ...(draft.comsumerDuration.trim() ? { comsumerDuration: numberFrom(draft.comsumerDuration) } : {}),
    };
    if (!check(schemaErrors(updateChannelInput, payload))) return;
    setBusy(true);
    const answer = await call("/api/admin/users/update_channel", payload);
    setBusy(false);
    if (toastResult(answer, AdminUserMsg.channelSaved, AdminUserMsg.channelFailed)) onClose();
  };

  return (
    <FormDialog
      open
      title={`渠道 · ${user.email}`}
      onClose={onClose}
      onSubmit={save}
      busy={busy || !draft}
      formRef={formRef}
    >
      {draft ? (
        <div className="admin-grid">
          <Field
            label="渠道名称"
            value={draft.name}
            error={errors.name}
            data-autofocus
            onChange={(event) => set("name", event.target.value)}
          />
          <Field
            label="渠道码"
            value={draft.code}
            placeholder="留空自动生成"
            maxLength={CHANNEL_CODE_LENGTH}
            error={errors.code}
            onChange={(event) => set("code", event.target.value)}
            addon={
              <button type="button" className="btn" onClick={() => set("code", randomChannelCode())}>
                随机
              </button>
            }
          />
          <NumberField
            label={`返利比例(0-${MAX_REWARD_RATE})`}
            step="0.01"
            value={draft.rewardRate}
            error={errors.rewardRate}
            onChange={(value) => set("rewardRate", value)}
          />
          <NumberField
            label="返利期限(天)"
            value={draft.comsumerDuration}
            error={errors.comsumerDuration}
            onChange={(value) => set("comsumerDuration", value)}
          />
        </div>
      ) : (
        <LoadingSpinner />
      )}
    </FormDialog>
  );
}

// ---- 编辑 ----

function UserFormDialog({
  user,
  onClose,
  onSaved,
}: {
  user: AdminUser;
  onClose: () => void;
  onSaved: () => void;
}) {
  const { form, set, bind, errors, dialog } = useDraftForm(
    () => userToDraft(user),
    AdminUserMsg,
    onSaved,
    (form: UserDraft) => {
      const payload = draftToUpdate(user._id, form);
      const { adjust, ...fields } = payload;
      return {
        // The adjustment's errors go under its own fields (traffic, days, wallet, reason).
        errors: {
          ...schemaErrors(updateUserInput, fields),
          ...(adjust ? schemaErrors(adjustmentInput, adjust) : {}),
        },
        send: () => call("/api/admin/users/update_user", payload),
      };
    },
  );

  const number = (
    key: "scale" | "dailyUnlimitTraffic" | "trafficG" | "days" | "walletYuan",
    label: string,
    step = "any",
  ) => <NumberField label={label} step={step} {...bind(key)} />;

  return (
    <FormDialog open title={`编辑用户 · ${user.email}`} onClose={onClose} size="lg" {...dialog}>
      <div className="admin-grid">
        <SwitchField label="禁用账号" checked={form.disable} onChange={(on) => set("disable", on)} />
        {number("scale", "倍率")}
        <SwitchField
          label="允许修改订阅地址"
          checked={form.canChangeDescribeKey}
          onChange={(on) => set("canChangeDescribeKey", on)}
        />
        <SwitchField
          label="允许修改密码"
          checked={form.canChangePassword}
          onChange={(on) => set("canChangePassword", on)}
        />
        <SwitchField
          label="普通权限"
          hint="无需持有权限即可看到需要权限的线路"
          checked={form.normalPermission}
          onChange={(on) => set("normalPermission", on)}
        />
        <SwitchField
          label="强制返利"
          hint="返利期限过后，该用户的订单仍为其渠道产生返利"
          checked={form.forceReward}
          onChange={(on) => set("forceReward", on)}
        />
        <SwitchField
          label="特殊每日限额"
          hint="开启后以每日不限流量替代时间套餐的每日额度"
          checked={form.specialDailyUnlimitTraffic}
          onChange={(on) => set("specialDailyUnlimitTraffic", on)}
        />
        {form.specialDailyUnlimitTraffic ? number("dailyUnlimitTraffic", "每日不限流量(G)") : null}
      </div>
      <fieldset className="user-adjust">
        <legend>调整余额</legend>
        <p className="admin-hint">
          正数增加、负数扣减，写入流量 / 钱包记录（管理员调整）。当前：流量 {formatGB(user.traffic)} G，钱包{" "}
          {formatYuan(yuanToFen(user.wallet_money))} 元，VIP 到期 {timeText(user.vipExpireTime)}。
        </p>
        <div className="admin-grid">
          {number("trafficG", "流量(G) ±")}
          {number("days", "天数 ±", "1")}
          {number("walletYuan", "钱包(元) ±", "0.01")}
          <Field
            label="原因"
            value={form.reason}
            placeholder="调整时必填，客户的流量记录中可见"
            error={errors.reason}
            onChange={(event) => set("reason", event.target.value)}
          />
        </div>
      </fieldset>
    </FormDialog>
  );
}

// ---- 修改密码 ----

function PasswordDialog({ user, onClose }: { user: AdminUser; onClose: () => void }) {
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const save = async () => {
    if (password.length < PASSWORD_MIN) {
      setError(`密码至少 ${PASSWORD_MIN} 位`);
      return;
    }
    setError(undefined);
    setBusy(true);
    const answer = await call("/api/admin/users/change_password", {
      email: user.email,
      password: transformPassword(password),
    });
    setBusy(false);
    if (toastResult(answer, AdminUserMsg.saved, AdminUserMsg.saveFailed)) onClose();
  };

  return (
    <FormDialog
      open
      title={`修改密码 · ${user.email}`}
      onClose={onClose}
      onSubmit={save}
      busy={busy}
      size="sm"
    >
      <Field
        label="新密码"
        type="password"
        autoComplete="new-password"
        value={password}
        error={error}
        data-autofocus
        onChange={(event) => setPassword(event.target.value)}
      />
      <p className="admin-hint">修改后该用户在所有设备上退出登录。</p>
    </FormDialog>
  );
}

// ---- 调试订阅 ----

const DEBUG_CLIENTS: { label: string; key: SubscribeClient["key"]; link: DeepLinkKind }[] = [
  { label: "Clash 导入", key: "clash", link: "clash" },
  { label: "Shadowrocket 导入", key: "ss", link: "shadowrocket" },
  { label: "sing-box 导入", key: "singbox", link: "singbox" },
];

function DebugSubscriptionDialog({ user, onClose }: { user: AdminUser; onClose: () => void }) {
  const { user: me } = useSession();
  const subject = { _id: user._id, userkey: user.userkey, describe_host: me?.describe_host ?? "" };
  const name = `${SITE_NAME}-${user.email}`;
  const plain = userSubscriptionUrl("v2ray", subject);
  return (
    <Dialog open onClose={onClose} title={`调试订阅 · ${user.email}`} size="sm">
      <p className="admin-hint">用该用户的订阅在本机客户端中导入，查看他看到的节点。</p>
      <div className="user-debug-links">
        {DEBUG_CLIENTS.map((client) => (
          <a
            key={client.key}
            className="btn"
            href={importLink(client.link, userSubscriptionUrl(client.key, subject), name)}
          >
            {client.label}
          </a>
        ))}
        <a className="btn" href={plain} target="_blank" rel="noopener noreferrer">
          打开订阅内容
        </a>
      </div>
      <code className="admin-id user-debug-url">{plain}</code>
    </Dialog>
  );
}

// ---- the page ----

type Open = { kind: "channel" | "edit" | "password" | "debug" | "devices"; user: AdminUser } | null;

const EMPTY_QUERY: UserListInput = { number: DEFAULT_USER_LIST_COUNT, filterStr: "" };

export function AdminUserListPage() {
  const [count, setCount] = useState(String(DEFAULT_USER_LIST_COUNT));
  const [filter, setFilter] = useState("");
  const [fromDay, setFromDay] = useState("");
  const [toDay, setToDay] = useState("");
  const [countError, setCountError] = useState<string>();
  const list = useRemoteList((query: UserListInput) => call("/api/admin/users/userlist", query), EMPTY_QUERY);
  const [open, setOpen] = useState<Open>(null);

  const search = (event: FormEvent) => {
    event.preventDefault();
    const query = {
      number: numberFrom(count),
      filterStr: filter.trim(),
      fromTimestamp: dayBound(fromDay, false),
      toTimestamp: dayBound(toDay, true),
    };
    const parsed = userListInput.safeParse(query);
    if (!parsed.success) {
      setCountError(AdminUserMsg.countRange);
      return;
    }
    setCountError(undefined);
    void list.reload(query);
  };

  const clear = () => {
    setCount(String(DEFAULT_USER_LIST_COUNT));
    setFilter("");
    setFromDay("");
    setToDay("");
    setCountError(undefined);
    void list.reload(EMPTY_QUERY);
  };

  const action = (kind: NonNullable<Open>["kind"], label: string) => (user: AdminUser) => (
    <button key={kind} type="button" className="btn btn-small" onClick={() => setOpen({ kind, user })}>
      {label}
    </button>
  );
  const actions = [
    action("channel", "渠道"),
    action("edit", "编辑"),
    action("password", "修改密码"),
    action("debug", "调试订阅"),
    action("devices", "设备"),
  ];

  const columns: Column<AdminUser>[] = [
    { key: "email", title: "邮箱", render: (row) => row.email },
    {
      key: "disable",
      title: "状态",
      render: (row) => (
        <span className={`badge ${row.disable ? "admin-status-off" : "admin-status-ok"}`}>
          {row.disable ? "已禁用" : "正常"}
        </span>
      ),
    },
    { key: "scale", title: "倍率", render: (row) => row.scale, className: "admin-num" },
    { key: "channel", title: "渠道码", render: (row) => channelText(row.channel_code) },
    { key: "created", title: "注册时间", render: (row) => timeText(row.createTime) },
    { key: "paid", title: "付费用户", render: (row) => (row.paidUser ? "是" : "否") },
    { key: "agency", title: "二级代理", render: (row) => row.agency || "-" },
    {
      key: "wallet",
      title: "钱包余额(元)",
      render: (row) => formatYuan(yuanToFen(row.wallet_money)),
      className: "admin-num",
    },
    {
      key: "traffic",
      title: "已用/剩余流量(G)",
      render: (row) => `${formatGB(row.spendTraffic)} / ${formatGB(row.traffic)}`,
      className: "admin-num",
    },
    { key: "vip", title: "VIP到期", render: (row) => timeText(row.vipExpireTime) },
    { key: "active", title: "最后活跃", render: (row) => timeText(row.lastActiveTime) },
    {
      key: "urls",
      title: "首次/最后来源",
      render: (row) => (
        <span className="user-urls">
          <span>{row.first_url || "-"}</span>
          <span>{row.last_url || "-"}</span>
        </span>
      ),
    },
    {
      key: "actions",
      title: "操作",
      render: (row) => (
        <div className="admin-row-actions user-row-actions">{actions.map((make) => make(row))}</div>
      ),
      className: "admin-sticky-actions",
    },
  ];

  const close = () => setOpen(null);
  return (
    <AdminPage title="用户管理">
      <form className="admin-filter" onSubmit={search}>
        <NumberField label="数量" min={1} value={count} error={countError} onChange={setCount} />
        <Field
          label="筛选"
          placeholder="邮箱、渠道码或用户 ID"
          value={filter}
          onChange={(event) => setFilter(event.target.value)}
        />
        <Field
          label="开始日期"
          type="date"
          value={fromDay}
          onChange={(event) => setFromDay(event.target.value)}
        />
        <Field
          label="结束日期"
          type="date"
          value={toDay}
          onChange={(event) => setToDay(event.target.value)}
        />
        <SearchButton list={list}>搜索</SearchButton>
        <button type="button" className="btn" onClick={clear}>
          清除
        </button>
      </form>
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="用户列表" />
      {open?.kind === "channel" ? <ChannelDialog user={open.user} onClose={close} /> : null}
      {open?.kind === "edit" ? (
        <UserFormDialog
          user={open.user}
          onClose={close}
          onSaved={() => {
            close();
            void list.reload();
          }}
        />
      ) : null}
      {open?.kind === "password" ? <PasswordDialog user={open.user} onClose={close} /> : null}
      {open?.kind === "debug" ? <DebugSubscriptionDialog user={open.user} onClose={close} /> : null}
      {open?.kind === "devices" ? <UserDevicesDialog user={open.user} onClose={close} /> : null}
    </AdminPage>
  );
}
