/**
 * /admin_agents (seed 001 §2.3): the nodes. Changing the type applies its defaults (§2.3.1);
 * warp, logging and the Shadowsocks cipher belong to v2ray nodes only. The server makes every
 * secret; the SSH password is write-only (blank keeps the stored one). Copy opens the form
 * without the id, so saving creates a new node. 升级节点 asks the node's agent to update itself,
 * 获取更新命令 shows the one-line install command, 重置更新次数 zeroes every update count.
 * 异常上报 (issue 11) counts the traffic a node reported for users it was not given (not charged);
 * the count opens them per user and day. A new node starts from its type's defaults for every port
 * (newNodeDefaults, as `ferry node add`), so name and IP are enough; the form is checked with the
 * server's agentInput before saving. A node that never called the panel is 未连接, not 异常.
 * The table keeps what an operator scans (issue 26 D13): order, ports, warp, logging and the
 * description are in 详情, and the 操作 column stays in view at the right edge.
 */
import { Fragment, lazy, type ReactNode, Suspense, useEffect, useRef, useState } from "react";
import { formatTraffic } from "../../../src/lib/traffic.ts";
import {
  type Agent,
  type AnomalyReason,
  agentInput,
  type Country,
  NODE_STATE_LABELS,
  NODE_TYPES,
  type NodeAnomaly,
  type NodeState,
  type NodeType,
  newNodeDefaults,
  nodeState,
  SERVER_TYPE_LABELS,
  SERVER_TYPES,
  type ServerType,
  SS_METHODS,
  type SsMethod,
  typeDefaults,
} from "../../../src/modules/node-record/schema.ts";
import type { ReconcileDay } from "../../../src/modules/traffic/reconcile-schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { type AgentForm, call } from "../../api.ts";
import {
  AdminPage,
  AdminTable,
  editDeleteColumn,
  LoadingSpinner,
} from "../../components/admin/AdminPage.tsx";
import { useConfirmedCall } from "../../components/admin/ConfirmDialog.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { toastFailure, toastResult } from "../../components/admin/feedback.ts";
import { schemaErrors } from "../../components/admin/formErrors.ts";
import { SelectField, SwitchField, TextAreaField } from "../../components/admin/inputs.tsx";
import { NumberField, onOff, readNumbers } from "../../components/admin/numbers.tsx";
import { type DraftDialogProps, useDraftEditor, useDraftForm } from "../../components/admin/useDraftForm.ts";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { copyToClipboard } from "../../components/clipboard.ts";
import { Dialog } from "../../components/Dialog.tsx";
import { Field } from "../../components/Field.tsx";
import { formatDateTime } from "../../components/format.ts";
import { type Column, Table } from "../../components/Table.tsx";

/** Seed 001 §8 toasts of this screen. */
export const AgentMsg = {
  saved: "更新成功",
  saveFailed: "配置失败",
  deleted: "节点删除成功",
  deleteFailed: "节点删除失败",
  upgraded: "升级成功",
  upgradeFailed: "升级失败",
  commandFailed: "获取命令失败",
  commandCopied: "命令已复制到剪贴板",
  anomaliesFailed: "获取异常上报失败",
  reconcileFailed: "获取对账失败",
  /** 重置更新次数: the seed's 更新成功, and its 刷新失败 when the server refuses. */
  countsReset: "更新成功",
  countsResetFailed: "刷新失败",
} as const;

/** What the host field means for each node type. */
export const HOST_LABELS: Record<NodeType, string> = {
  v2ray: "域名（WS/TLS，可空）",
  reality: "伪装域名（SNI）",
  h2: "证书域名（可空）",
};

const NUMBER_KEYS = ["index", "ctrl_port", "zz_port", "port", "public_port", "ssh_port"] as const;
type NumberKey = (typeof NUMBER_KEYS)[number];

export interface AgentDraft extends Record<NumberKey, string> {
  _id?: string;
  name: string;
  countryCode: string;
  type: NodeType;
  ip: string;
  host: string;
  warp: boolean;
  open_log: boolean;
  serverType: ServerType;
  ss_method: SsMethod;
  ssh_username: string;
  /** Blank keeps the stored password. */
  ssh_password: string;
  desc: string;
  /** Read-only facts of the stored node; absent on add and copy. */
  stored?: Pick<Agent, "hasSshPassword" | "reality_public_key" | "reality_short_id">;
}

/** The draft after a type change: the type's defaults replace the fields it names. */
export function withType(draft: AgentDraft, type: NodeType): AgentDraft {
  const defaults = typeDefaults(type);
  const next: AgentDraft = { ...draft, type };
  for (const key of ["ctrl_port", "zz_port", "port", "public_port"] as const) {
    const value = defaults[key];
    if (value !== undefined) next[key] = String(value);
  }
  if (defaults.serverType) next.serverType = defaults.serverType;
  return next;
}

/** A new node of `type`: every port and the install flavour from newNodeDefaults. */
export function newAgentDraft(type: NodeType = "v2ray"): AgentDraft {
  const defaults = newNodeDefaults(type);
  return {
    name: "",
    countryCode: "",
    type,
    ip: "",
    host: "",
    index: "0",
    ctrl_port: String(defaults.ctrl_port),
    zz_port: String(defaults.zz_port),
    port: String(defaults.port),
    public_port: String(defaults.public_port),
    warp: false,
    open_log: false,
    serverType: defaults.serverType,
    ss_method: SS_METHODS[0],
    ssh_port: "22",
    ssh_username: "",
    ssh_password: "",
    desc: "",
  };
}

export function agentToDraft(agent: Agent): AgentDraft {
  return {
    _id: agent._id,
    name: agent.name,
    countryCode: agent.country.code,
    type: agent.type,
    ip: agent.ip,
    host: agent.host,
    index: String(agent.index),
    ctrl_port: String(agent.ctrl_port),
    zz_port: String(agent.zz_port),
    port: String(agent.port),
    public_port: String(agent.public_port),
    warp: agent.warp,
    open_log: agent.open_log,
    serverType: agent.serverType,
    ss_method: agent.ss_method,
    ssh_port: String(agent.ssh_port),
    ssh_username: agent.ssh_username,
    ssh_password: "",
    desc: agent.desc,
    stored: {
      hasSshPassword: agent.hasSshPassword,
      reality_public_key: agent.reality_public_key,
      reality_short_id: agent.reality_short_id,
    },
  };
}

/** Copy (seed 001 §2.3.1): the row's values without the id and without what only it owns. */
export function copyDraft(agent: Agent): AgentDraft {
  const { _id, stored, ...rest } = agentToDraft(agent);
  return rest;
}

/** The payload of agents/update; agentInput judges it (a number left blank is NaN: 请输入数字). */
export function draftToAgent(draft: AgentDraft): AgentForm {
  const isV2ray = draft.type === "v2ray";
  return {
    ...(draft._id ? { _id: draft._id } : {}),
    ...readNumbers(draft, NUMBER_KEYS),
    name: draft.name.trim(),
    country: { code: draft.countryCode },
    type: draft.type,
    ip: draft.ip.trim(),
    host: draft.host.trim(),
    warp: isV2ray && draft.warp,
    open_log: isV2ray && draft.open_log,
    serverType: draft.serverType,
    ss_method: draft.ss_method,
    ssh_username: draft.ssh_username.trim(),
    ssh_password: draft.ssh_password,
    desc: draft.desc,
  };
}

/** The form field of a payload key whose name differs. */
const FIELD_OF = { country: "countryCode" };

/** The picker's list from the static resource (seed 001 §2.3); empty if it cannot be read. */
function useCountries(): Country[] {
  const [countries, setCountries] = useState<Country[]>([]);
  useEffect(() => {
    let current = true;
    fetch("/country/country.json")
      .then((response) => (response.ok ? (response.json() as Promise<Country[]>) : []))
      .catch(() => [])
      .then((list) => {
        if (current) setCountries(list);
      });
    return () => {
      current = false;
    };
  }, []);
  return countries;
}

const option = <V extends string>(value: V) => ({ value, label: value });
const serverTypeOption = (value: ServerType) => ({ value, label: SERVER_TYPE_LABELS[value] });

/** A list of label / value pairs (the form's Reality keys, 详情). */
function Facts({ facts }: { facts: readonly (readonly [string, ReactNode])[] }) {
  return (
    <dl className="admin-details">
      {facts.map(([label, value]) => (
        <Fragment key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

const realityFacts = (keys: Pick<Agent, "reality_public_key" | "reality_short_id">) =>
  [
    [
      "Reality 公钥",
      <code key="public-key" className="admin-id">
        {keys.reality_public_key}
      </code>,
    ],
    [
      "Short ID",
      <code key="short-id" className="admin-id">
        {keys.reality_short_id}
      </code>,
    ],
  ] as const;

function AgentFormDialog({ draft, onClose, onSaved }: DraftDialogProps<AgentDraft>) {
  const { form, setForm, set, bind, errors, dialog } = useDraftForm(draft, AgentMsg, onSaved, (form) => {
    const agent = draftToAgent(form);
    return {
      errors: schemaErrors(agentInput, agent, FIELD_OF),
      send: () => call("/api/admin/agents/update", agent),
    };
  });
  const countries = useCountries();

  const countryOptions = [
    { value: "", label: "未设置" },
    ...countries.map((country) => ({ value: country.code, label: `${country.flag} ${country.name}` })),
  ];
  if (form.countryCode && !countries.some((country) => country.code === form.countryCode)) {
    countryOptions.push({ value: form.countryCode, label: form.countryCode });
  }

  const number = (key: NumberKey, label: string) => <NumberField label={label} {...bind(key)} />;
  const isV2ray = form.type === "v2ray";
  const stored = form.stored;

  return (
    <FormDialog open title={form._id ? "编辑节点" : "添加节点"} onClose={onClose} size="lg" {...dialog}>
      <div className="admin-grid">
        <Field
          label="名称"
          value={form.name}
          error={errors.name}
          data-autofocus
          onChange={(event) => set("name", event.target.value)}
        />
        <SelectField
          label="国家"
          value={form.countryCode}
          options={countryOptions}
          error={errors.countryCode}
          onChange={(code) => set("countryCode", code)}
        />
        <SelectField
          label="类型"
          value={form.type}
          options={NODE_TYPES.map(option)}
          error={errors.type}
          onChange={(type) => setForm(withType(form, type))}
        />
        <SelectField
          label="服务器类型"
          value={form.serverType}
          options={SERVER_TYPES.map(serverTypeOption)}
          error={errors.serverType}
          onChange={(serverType) => set("serverType", serverType)}
        />
        <Field
          label="IP"
          value={form.ip}
          error={errors.ip}
          onChange={(event) => set("ip", event.target.value)}
        />
        <Field
          label={HOST_LABELS[form.type]}
          value={form.host}
          error={errors.host}
          onChange={(event) => set("host", event.target.value)}
        />
        {number("ctrl_port", "控制端口")}
        {number("zz_port", "中转端口")}
        {number("port", "端口")}
        {number("public_port", "公开端口")}
        {isV2ray ? (
          <>
            <SelectField
              label="SS 加密方式"
              value={form.ss_method}
              options={SS_METHODS.map(option)}
              error={errors.ss_method}
              onChange={(method) => set("ss_method", method)}
            />
            <SwitchField label="Warp 分流" checked={form.warp} onChange={(warp) => set("warp", warp)} />
            <SwitchField label="日志" checked={form.open_log} onChange={(on) => set("open_log", on)} />
          </>
        ) : null}
        {number("ssh_port", "SSH 端口")}
        <Field
          label="SSH 用户名"
          value={form.ssh_username}
          error={errors.ssh_username}
          autoComplete="off"
          onChange={(event) => set("ssh_username", event.target.value)}
        />
        <Field
          label="SSH 密码"
          type="password"
          autoComplete="new-password"
          value={form.ssh_password}
          error={errors.ssh_password}
          placeholder={stored?.hasSshPassword ? "已保存" : ""}
          onChange={(event) => set("ssh_password", event.target.value)}
        />
        {number("index", "排序")}
      </div>
      {stored?.hasSshPassword ? <p className="admin-hint">SSH 密码已保存，留空则不修改。</p> : null}
      <TextAreaField
        label="描述"
        value={form.desc}
        error={errors.desc}
        onChange={(desc) => set("desc", desc)}
      />
      {stored && form.type === "reality" && stored.reality_public_key ? (
        <Facts facts={realityFacts(stored)} />
      ) : null}
      <p className="admin-hint">密钥由服务器生成，不需要填写。</p>
    </FormDialog>
  );
}

const STATE_BADGES: Record<NodeState, string> = {
  ok: "admin-status-ok",
  error: "network-status-error",
  never: "badge-muted",
};

/** 正常 green, 异常 red, 未连接 grey (the node has not called the panel yet). */
function StatusBadge({ agent }: { agent: Agent }) {
  const state = nodeState(agent);
  return <span className={`badge ${STATE_BADGES[state]}`}>{NODE_STATE_LABELS[state]}</span>;
}

const orDash = (text: string) => text || "-";
const countryText = (agent: Agent) =>
  agent.country.code ? `${agent.country.flag} ${agent.country.name}` : "-";

/** 详情: every fact of the node (seed 001 §2.3), the columns the table leaves out included. */
function DetailsDialog({
  agent,
  onEdit,
  onClose,
}: {
  agent: Agent;
  onEdit: () => void;
  onClose: () => void;
}) {
  const facts: (readonly [string, ReactNode])[] = [
    ["名称", agent.name],
    ["排序", agent.index],
    ["国家", countryText(agent)],
    ["类型", agent.type],
    ["服务器类型", SERVER_TYPE_LABELS[agent.serverType]],
    ["IP", agent.ip],
    [HOST_LABELS[agent.type], orDash(agent.host)],
    ["控制端口", agent.ctrl_port],
    ["中转端口", agent.zz_port],
    ["端口", agent.port],
    ["公开端口", agent.public_port],
  ];
  if (agent.type === "v2ray") {
    facts.push(
      ["SS 加密方式", agent.ss_method],
      ["Warp 分流", onOff(agent.warp)],
      ["日志", onOff(agent.open_log)],
    );
  }
  if (agent.type === "reality" && agent.reality_public_key) facts.push(...realityFacts(agent));
  facts.push(
    ["SSH 端口", agent.ssh_port],
    ["SSH 用户名", orDash(agent.ssh_username)],
    ["描述", orDash(agent.desc)],
    ["状态", <StatusBadge key="status" agent={agent} />],
    ["最近连接", agent.lastSeenTime ? formatDateTime(agent.lastSeenTime) : "从未"],
    ["运行版本", orDash(agent.agent_version)],
    ["更新次数", agent.updateConfigTimes],
    ["异常上报", agent.anomalies],
  );
  return (
    <Dialog
      open
      onClose={onClose}
      title={`节点详情：${agent.name}`}
      size="lg"
      footer={
        <>
          <button type="button" className="btn" data-autofocus onClick={onClose}>
            关闭
          </button>
          <button type="button" className="btn btn-primary" onClick={onEdit}>
            编辑
          </button>
        </>
      }
    >
      <Facts facts={facts} />
    </Dialog>
  );
}

/** 获取更新命令: the one-line command to run as root on the node (it holds the node's token). */
function CommandDialog({ agent, command, onClose }: { agent: Agent; command: string; onClose: () => void }) {
  return (
    <Dialog
      open
      onClose={onClose}
      title="更新命令"
      size="lg"
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            关闭
          </button>
          <button
            type="button"
            className="btn btn-primary"
            data-autofocus
            onClick={() => void copyToClipboard(command, { ok: AgentMsg.commandCopied })}
          >
            复制
          </button>
        </>
      }
    >
      <p className="admin-hint">
        在节点「{agent.name}」上以 root 运行，安装或更新节点程序。命令含节点令牌，请勿外传。
      </p>
      <pre className="node-command">
        <code>{command}</code>
      </pre>
    </Dialog>
  );
}

const ANOMALY_REASONS: Record<AnomalyReason, string> = {
  not_admitted: "不在该节点的用户列表",
  unknown_user: "用户不存在",
  others: "当日超出 1000 个用户的其余用户（合计）",
};

const bytes = (value: number) => <span title={`${value} 字节`}>{formatTraffic(value)}</span>;

const ANOMALY_COLUMNS: Column<NodeAnomaly>[] = [
  { key: "day", title: "日期", render: (row) => row.day },
  {
    key: "user",
    title: "用户编号",
    render: (row) => (row.userNo === 0 ? "-" : row.userNo),
    className: "admin-num",
  },
  { key: "email", title: "邮箱", render: (row) => orDash(row.email) },
  { key: "reason", title: "原因", render: (row) => ANOMALY_REASONS[row.reason] },
  { key: "upload", title: "上传", render: (row) => bytes(row.upload), className: "admin-num" },
  { key: "download", title: "下载", render: (row) => bytes(row.download), className: "admin-num" },
  { key: "reports", title: "上报次数", render: (row) => row.reports, className: "admin-num" },
  { key: "last", title: "最近上报", render: (row) => formatDateTime(row.lastTime) },
];

/** 异常上报: traffic the node reported for users it was not given; none of it was charged. */
function AnomaliesDialog({
  agent,
  rows,
  onClose,
}: {
  agent: Agent;
  rows: NodeAnomaly[];
  onClose: () => void;
}) {
  return (
    <Dialog
      open
      onClose={onClose}
      title={`异常上报：${agent.name}`}
      size="lg"
      footer={
        <button type="button" className="btn" data-autofocus onClick={onClose}>
          关闭
        </button>
      }
    >
      <p className="admin-hint">
        节点上报了不在其用户列表中的用户流量，这些流量未扣除任何用户的余额。若非刚调整过线路，节点令牌可能已泄露，请考虑重装该节点。保留最近
        30 天，按用户和日期汇总。
      </p>
      <Table
        columns={ANOMALY_COLUMNS}
        rows={rows}
        rowKey={(row) => `${row.day}-${row.userNo}`}
        caption="异常上报"
      />
    </Dialog>
  );
}

const ReconcileChart = lazy(() => import("./ReconcileChart.tsx"));

const percent = (ratio: number) => `${(ratio * 100).toFixed(2)}%`;

const RECONCILE_HINT =
  "最近 30 个营业日，按面板收到上报的时间计日。应计由原始流量和当时的倍率（线路、用户、全局、每次最低扣除）重新算出，" +
  "计费与应计相差超过 0.1% 的日期标为不符（图中以红点和 ⚠ 标出）。";

const RECONCILE_COLUMNS: Column<ReconcileDay>[] = [
  { key: "day", title: "日期", render: (row) => row.day },
  { key: "reports", title: "上报次数", render: (row) => row.reports, className: "admin-num" },
  { key: "raw", title: "原始流量", render: (row) => bytes(row.rawBytes), className: "admin-num" },
  { key: "anomaly", title: "异常流量", render: (row) => bytes(row.anomalyBytes), className: "admin-num" },
  { key: "charged", title: "计费", render: (row) => bytes(row.chargedBytes), className: "admin-num" },
  {
    key: "expected",
    title: "应计",
    render: (row) => bytes(row.expectedChargedBytes),
    className: "admin-num",
  },
  {
    key: "state",
    title: "对账",
    render: (row) =>
      row.flagged ? (
        <span className="badge network-status-error">不符 {percent(row.divergenceRatio)}</span>
      ) : (
        <span className="badge admin-status-ok">相符</span>
      ),
  },
];

/** 对账: the node's last 30 business days, charged against expected; days off by > 0.1 % are 不符. */
function ReconcileDialog({
  agent,
  rows,
  onClose,
}: {
  agent: Agent;
  rows: ReconcileDay[];
  onClose: () => void;
}) {
  const flagged = rows.filter((row) => row.flagged).length;
  return (
    <Dialog
      open
      onClose={onClose}
      title={`对账：${agent.name}`}
      size="lg"
      footer={
        <button type="button" className="btn" data-autofocus onClick={onClose}>
          关闭
        </button>
      }
    >
      <p className="admin-hint">
        {RECONCILE_HINT}
        {flagged > 0 ? `共 ${flagged} 天不符。` : ""}
      </p>
      {rows.length > 0 ? (
        <Suspense fallback={<LoadingSpinner />}>
          <ReconcileChart rows={rows} />
        </Suspense>
      ) : null}
      <Table columns={RECONCILE_COLUMNS} rows={rows} rowKey={(row) => row.day} caption="对账" />
    </Dialog>
  );
}

export function AdminAgentsPage() {
  const list = useRemoteList(() => call("/api/admin/agents/list", {}));
  const editor = useDraftEditor<AgentDraft>(list.reload);
  const [command, setCommand] = useState<{ agent: Agent; command: string } | null>(null);
  const [anomalies, setAnomalies] = useState<{ agent: Agent; rows: NodeAnomaly[] } | null>(null);
  const [details, setDetails] = useState<Agent | null>(null);
  const [reconcile, setReconcile] = useState<{ agent: Agent; rows: ReconcileDay[] } | null>(null);
  const { confirm, confirmedCall, confirmDelete, dialog: confirmDialog } = useConfirmedCall(list.reload);
  const upgrading = useRef(new Set<string>());

  const remove = (agent: Agent) =>
    confirmDelete(
      `节点「${agent.name}」及其线路将被删除。`,
      () => call("/api/admin/agents/delete", { id: agent._id }),
      AgentMsg,
    );

  const upgrade = async (agent: Agent) => {
    if (upgrading.current.has(agent._id)) return;
    const ok = await confirm({
      title: "升级确认",
      message: `确认升级节点「${agent.name}」? 节点程序会下载面板的版本并重启。`,
      confirmText: "升级",
      danger: false,
    });
    if (!ok) return;
    upgrading.current.add(agent._id);
    const answer = await call("/api/admin/agents/upgrade_agentserver", agent);
    upgrading.current.delete(agent._id);
    if (toastResult(answer, AgentMsg.upgraded, AgentMsg.upgradeFailed)) void list.reload();
  };

  const showCommand = async (agent: Agent) => {
    const answer = await call("/api/admin/agents/manual_update_agent", { agentid: agent._id });
    if (answer.code === Code.ok) setCommand({ agent, command: answer.data.cmd });
    else toastFailure(answer, AgentMsg.commandFailed);
  };

  const showAnomalies = async (agent: Agent) => {
    const answer = await call("/api/admin/agents/anomalies", { id: agent._id });
    if (answer.code === Code.ok) setAnomalies({ agent, rows: answer.data });
    else toastFailure(answer, AgentMsg.anomaliesFailed);
  };

  const showReconcile = async (agent: Agent) => {
    const answer = await call("/api/admin/agents/reconcile", { id: agent._id });
    if (answer.code === Code.ok) setReconcile({ agent, rows: answer.data });
    else toastFailure(answer, AgentMsg.reconcileFailed);
  };

  const resetUpdateCounts = () =>
    confirmedCall(
      { title: "重置确认", message: "确认把所有节点的更新次数清零?", confirmText: "重置" },
      () => call("/api/admin/agents/clear_updatetimes", {}),
      AgentMsg.countsReset,
      AgentMsg.countsResetFailed,
    );

  const columns: Column<Agent>[] = [
    { key: "name", title: "名称", render: (row) => row.name, className: "admin-wrap" },
    { key: "country", title: "国家", render: countryText },
    { key: "type", title: "类型", render: (row) => row.type },
    { key: "ip", title: "IP", render: (row) => row.ip },
    { key: "status", title: "状态", render: (row) => <StatusBadge agent={row} /> },
    { key: "version", title: "运行版本", render: (row) => orDash(row.agent_version) },
    { key: "updates", title: "更新次数", render: (row) => row.updateConfigTimes, className: "admin-num" },
    {
      key: "anomalies",
      title: "异常上报",
      className: "admin-num",
      render: (row) =>
        row.anomalies > 0 ? (
          <button
            type="button"
            className="btn btn-small"
            aria-label={`${row.name} 异常上报 ${row.anomalies} 条`}
            onClick={() => void showAnomalies(row)}
          >
            {row.anomalies}
          </button>
        ) : (
          0
        ),
    },
    {
      ...editDeleteColumn((row) => editor.edit(agentToDraft(row)), remove, [
        { label: "详情", onClick: setDetails },
        { label: "对账", onClick: (row) => void showReconcile(row) },
        { label: "复制", onClick: (row) => editor.edit(copyDraft(row)) },
        { label: "升级节点", onClick: (row) => void upgrade(row) },
        { label: "获取更新命令", onClick: (row) => void showCommand(row) },
      ]),
      className: "admin-sticky-actions node-actions",
    },
  ];

  return (
    <AdminPage
      title="节点管理"
      actions={
        <>
          <button type="button" className="btn" onClick={() => void resetUpdateCounts()}>
            重置更新次数
          </button>
          <button type="button" className="btn btn-primary" onClick={() => editor.edit(newAgentDraft())}>
            添加
          </button>
        </>
      }
    >
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="节点列表" />
      {editor.dialog ? <AgentFormDialog key={editor.key} {...editor.dialog} /> : null}
      {command ? (
        <CommandDialog agent={command.agent} command={command.command} onClose={() => setCommand(null)} />
      ) : null}
      {anomalies ? (
        <AnomaliesDialog agent={anomalies.agent} rows={anomalies.rows} onClose={() => setAnomalies(null)} />
      ) : null}
      {reconcile ? (
        <ReconcileDialog agent={reconcile.agent} rows={reconcile.rows} onClose={() => setReconcile(null)} />
      ) : null}
      {details ? (
        <DetailsDialog
          agent={details}
          onClose={() => setDetails(null)}
          onEdit={() => {
            setDetails(null);
            editor.edit(agentToDraft(details));
          }}
        />
      ) : null}
      {confirmDialog}
    </AdminPage>
  );
}
