/**
 * /admin_agentLines (seed 001 §2.9): the lines subscriptions are made of. Choosing a node sets the
 * protocol and bridge it starts on (lineDefaultsForNode: 中转 only while an entry exists, else
 * 直连); the protocol list is the node type's;
 * the entry field appears only for 中转 (with a link to 入口管理 while there is no entry) and the CDN
 * address only for CDN. The form is checked with the server's lineInput before saving, so a fixed
 * name with a count above 1 is refused on the count (seed 001 §5). 复制日志 copies the line's JSON.
 */
import { useId, useState } from "react";
import { formatGB } from "../../../src/lib/traffic.ts";
import {
  type AgentLine,
  BRIDGE_LABELS,
  BRIDGES,
  type Bridge,
  type LineProtocol,
  lineDefaultsForNode,
  lineInput,
  PROTOCOL_LABELS,
  PROTOCOLS_BY_NODE_TYPE,
  requiredPermission,
} from "../../../src/modules/line/schema.ts";
import type { Agent } from "../../../src/modules/node-record/schema.ts";
import { call, type LineForm } from "../../api.ts";
import { AdminPage, AdminTable, editDeleteColumn } from "../../components/admin/AdminPage.tsx";
import { useConfirmedCall } from "../../components/admin/ConfirmDialog.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { type FieldErrors, schemaErrors } from "../../components/admin/formErrors.ts";
import {
  FieldFrame,
  invalidProps,
  SelectField,
  SwitchField,
  TextAreaField,
} from "../../components/admin/inputs.tsx";
import { NumberField, onOff, readNumbers } from "../../components/admin/numbers.tsx";
import { type DraftDialogProps, useDraftEditor, useDraftForm } from "../../components/admin/useDraftForm.ts";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { copyToClipboard } from "../../components/clipboard.ts";
import { Field } from "../../components/Field.tsx";
import type { Column } from "../../components/Table.tsx";

/** Seed 001 §8 toasts of this screen. */
export const LineMsg = {
  saveFailed: "线路配置失败",
  deleted: "删除成功",
  deleteFailed: "删除失败",
  heatReset: "流量刷新成功",
  heatResetFailed: "流量刷新失败",
} as const;

const NUMBER_KEYS = ["index", "scale", "num"] as const;
type NumberKey = (typeof NUMBER_KEYS)[number];

export interface LineDraft extends Record<NumberKey, string> {
  _id?: string;
  name: string;
  agentID: string;
  protocol: LineProtocol;
  bridge: Bridge;
  entryID: string;
  public: boolean;
  fixName: boolean;
  disableForAgency: boolean;
  /** "" = 无. */
  permissionRequire: string;
  msg: string;
  bridgeAddr: string;
}

/** Bridges a protocol can use: Hysteria2 (UDP) only direct, the CDN only for VMess WebSocket. */
export function bridgesFor(protocol: LineProtocol): readonly Bridge[] {
  if (protocol === "h2") return ["none"];
  return BRIDGES.filter((bridge) => bridge !== "cf_cdn" || protocol === "vmesh_ws");
}

/** Seed 001 §2.9: a node of type h2 forces h2 / direct, any other starts on 中转 if there is an entry. */
export function withNode(draft: LineDraft, agent: Pick<Agent, "_id" | "type">, hasEntry: boolean): LineDraft {
  return { ...draft, agentID: agent._id, ...lineDefaultsForNode(agent.type, hasEntry) };
}

/** A protocol change keeps the bridge when the protocol allows it, else falls back. */
export function withProtocol(draft: LineDraft, protocol: LineProtocol): LineDraft {
  const allowed = bridgesFor(protocol);
  const bridge = allowed.includes(draft.bridge) ? draft.bridge : protocol === "h2" ? "none" : "report";
  return { ...draft, protocol, bridge };
}

export function newLineDraft(agent: Pick<Agent, "_id" | "type"> | undefined, hasEntry: boolean): LineDraft {
  const draft: LineDraft = {
    name: "",
    index: "0",
    agentID: "",
    // Before a node is chosen: what a v2ray node starts on (the rule lives in lineDefaultsForNode).
    ...lineDefaultsForNode("v2ray", hasEntry),
    entryID: "",
    scale: "1",
    num: "1",
    public: true,
    fixName: false,
    disableForAgency: false,
    permissionRequire: "",
    msg: "",
    bridgeAddr: "",
  };
  return agent ? withNode(draft, agent, hasEntry) : draft;
}

export function lineToDraft(line: AgentLine): LineDraft {
  return {
    _id: line._id,
    name: line.name,
    index: String(line.index),
    agentID: line.agentID,
    protocol: line.protocol,
    bridge: line.bridge,
    entryID: line.entryID,
    scale: String(line.scale),
    num: String(line.num),
    public: line.public,
    fixName: line.fixName,
    disableForAgency: line.disableForAgency,
    permissionRequire: requiredPermission(line) ?? "",
    msg: line.msg,
    bridgeAddr: line.bridgeAddr,
  };
}

/** The payload of agent_line/update; lineInput judges it. */
export function draftToLine(draft: LineDraft): LineForm {
  return {
    ...(draft._id ? { _id: draft._id } : {}),
    ...readNumbers(draft, NUMBER_KEYS),
    name: draft.name.trim(),
    agentID: draft.agentID,
    protocol: draft.protocol,
    bridge: draft.bridge,
    entryID: draft.bridge === "report" ? draft.entryID : "",
    public: draft.public,
    fixName: draft.fixName,
    disableForAgency: draft.disableForAgency,
    permissionRequire: draft.permissionRequire,
    msg: draft.msg,
    bridgeAddr: draft.bridge === "cf_cdn" ? draft.bridgeAddr.trim() : "",
  };
}

/** What lineInput finds wrong, with a node not chosen yet said as the picker says it. */
export function lineErrors(line: LineForm): FieldErrors {
  return { ...schemaErrors(lineInput, line), ...(line.agentID ? {} : { agentID: "请选择节点" }) };
}

/** The 入口 field while no entry exists: what to do instead of an empty list. */
function NoEntryField({ error }: { error?: string }) {
  const id = useId();
  return (
    <FieldFrame label="入口" error={error} describes={id}>
      <p className="admin-empty-choice">
        暂无入口。中转线路需要先在
        <a id={id} href="#/admin_entrys" {...invalidProps(id, error)}>
          入口管理
        </a>
        中添加入口，或改用直连。
      </p>
    </FieldFrame>
  );
}

type Options = { value: string; label: string }[];

const agentLabel = (agent: Agent) =>
  `${agent.country.code ? `${agent.country.flag} ` : ""}${agent.name}（${agent.type}）`;

function LineFormDialog({
  draft,
  agents,
  entries,
  permissions,
  onClose,
  onSaved,
}: DraftDialogProps<LineDraft> & { agents: Agent[]; entries: Options; permissions: Options }) {
  const { form, setForm, set, bind, errors, dialog } = useDraftForm(draft, LineMsg, onSaved, (form) => {
    const line = draftToLine(form);
    return { errors: lineErrors(line), send: () => call("/api/admin/agent_line/update", line) };
  });
  const agent = agents.find((a) => a._id === form.agentID);

  const agentOptions: Options = [
    ...(agent ? [] : [{ value: form.agentID, label: form.agentID ? "节点已删除" : "请选择节点" }]),
    ...agents.map((a) => ({ value: a._id, label: agentLabel(a) })),
  ];
  const protocols = agent ? PROTOCOLS_BY_NODE_TYPE[agent.type] : [form.protocol];
  const entryOptions: Options = [
    ...(entries.some((e) => e.value === form.entryID) ? [] : [{ value: "", label: "请选择入口" }]),
    ...entries,
  ];
  const number = (key: NumberKey, label: string, step?: string) => (
    <NumberField label={label} step={step} {...bind(key)} />
  );

  return (
    <FormDialog open title={form._id ? "编辑线路" : "添加线路"} onClose={onClose} size="lg" {...dialog}>
      <div className="admin-grid">
        <Field
          label="线路名称"
          value={form.name}
          error={errors.name}
          data-autofocus
          onChange={(event) => set("name", event.target.value)}
        />
        <SelectField
          label="节点"
          value={form.agentID}
          options={agentOptions}
          error={errors.agentID}
          hint={
            agents.length === 0 ? (
              <>
                暂无节点，请先在<a href="#/admin_agents">节点管理</a>中添加
              </>
            ) : undefined
          }
          onChange={(id) => {
            const chosen = agents.find((a) => a._id === id);
            if (chosen) setForm(withNode(form, chosen, entries.length > 0));
          }}
        />
        <SelectField
          label="协议"
          value={form.protocol}
          error={errors.protocol}
          options={protocols.map((protocol) => ({ value: protocol, label: PROTOCOL_LABELS[protocol] }))}
          onChange={(protocol) => setForm(withProtocol(form, protocol))}
        />
        <SelectField
          label="桥接方式"
          value={form.bridge}
          error={errors.bridge}
          options={bridgesFor(form.protocol).map((bridge) => ({
            value: bridge,
            label: BRIDGE_LABELS[bridge],
          }))}
          onChange={(bridge) => set("bridge", bridge)}
        />
        {form.bridge === "report" && entries.length === 0 ? <NoEntryField error={errors.entryID} /> : null}
        {form.bridge === "report" && entries.length > 0 ? (
          <SelectField
            label="入口"
            value={form.entryID}
            options={entryOptions}
            error={errors.entryID}
            onChange={(entryID) => set("entryID", entryID)}
          />
        ) : null}
        {form.bridge === "cf_cdn" ? (
          <Field
            label="CDN 地址（可空，默认节点域名）"
            value={form.bridgeAddr}
            error={errors.bridgeAddr}
            onChange={(event) => set("bridgeAddr", event.target.value)}
          />
        ) : null}
        {number("scale", "流量倍率", "any")}
        {number("num", "数量")}
        <SelectField
          label="所需权限"
          value={form.permissionRequire}
          error={errors.permissionRequire}
          options={[{ value: "", label: "无" }, ...permissions]}
          onChange={(permission) => set("permissionRequire", permission)}
        />
        {number("index", "排序")}
        <SwitchField label="订阅" checked={form.public} onChange={(on) => set("public", on)} />
        <SwitchField
          label="固定名字"
          checked={form.fixName}
          hint="开启后订阅中的名字不加序号"
          onChange={(on) => set("fixName", on)}
        />
        <SwitchField
          label="代理用户不可用"
          checked={form.disableForAgency}
          onChange={(on) => set("disableForAgency", on)}
        />
      </div>
      <TextAreaField label="备注" value={form.msg} error={errors.msg} onChange={(msg) => set("msg", msg)} />
    </FormDialog>
  );
}

export function AdminAgentLinesPage() {
  const [agentFilter, setAgentFilter] = useState("");
  const list = useRemoteList((query: { agentID: string }) => call("/api/admin/agent_line/list", query), {
    agentID: "",
  });
  const agents = useRemoteList(() => call("/api/admin/agents/list", {}));
  const entries = useRemoteList(() => call("/api/admin/entrys/list", {}));
  const permissions = useRemoteList(() => call("/api/admin/permissions/list", {}));
  const editor = useDraftEditor<LineDraft>(list.reload);
  const { confirmedCall, confirmDelete, dialog: confirmDialog } = useConfirmedCall(list.reload);

  const agentName = new Map(agents.rows.map((a) => [a._id, a.name]));
  const entryName = new Map(entries.rows.map((e) => [e._id, e.name]));
  const permissionName = new Map(permissions.rows.map((p) => [p._id, p.name]));

  const filterBy = (agentID: string) => {
    setAgentFilter(agentID);
    void list.reload({ agentID });
  };

  const remove = (line: AgentLine) =>
    confirmDelete(
      `线路「${line.name}」将被删除。`,
      () => call("/api/admin/agent_line/delete_agent", { id: line._id }),
      LineMsg,
    );

  const resetHeat = () =>
    confirmedCall(
      { title: "重置确认", message: "确认将所有线路的流量热度清零?", confirmText: "重置" },
      () => call("/api/admin/agent_line/reset_hot", {}),
      LineMsg.heatReset,
      LineMsg.heatResetFailed,
    );

  const entryText = (line: AgentLine) => {
    if (line.bridge !== "report") return BRIDGE_LABELS[line.bridge];
    return line.entryID ? (entryName.get(line.entryID) ?? "-") : "未选择入口";
  };

  const columns: Column<AgentLine>[] = [
    { key: "index", title: "排序", render: (row) => row.index, className: "admin-num" },
    { key: "agent", title: "节点", render: (row) => agentName.get(row.agentID) ?? "-" },
    { key: "name", title: "线路名称", render: (row) => row.name },
    { key: "protocol", title: "协议", render: (row) => PROTOCOL_LABELS[row.protocol] },
    { key: "entry", title: "入口", render: entryText },
    { key: "public", title: "订阅", render: (row) => onOff(row.public) },
    {
      key: "permission",
      title: "所需权限",
      render: (row) =>
        requiredPermission(row) ? (permissionName.get(row.permissionRequire) ?? "已删除的权限") : "无",
    },
    { key: "scale", title: "流量倍率", render: (row) => row.scale, className: "admin-num" },
    { key: "num", title: "数量", render: (row) => row.num, className: "admin-num" },
    { key: "hot", title: "热度(G)", render: (row) => formatGB(row.hot), className: "admin-num" },
    editDeleteColumn((row) => editor.edit(lineToDraft(row)), remove, [
      { label: "复制", onClick: (row) => editor.edit({ ...lineToDraft(row), _id: undefined }) },
      { label: "复制日志", onClick: (row) => void copyToClipboard(JSON.stringify(row, null, 2)) },
    ]),
  ];

  const filterOptions: Options = [
    { value: "", label: "全部" },
    ...agents.rows.map((a) => ({ value: a._id, label: agentLabel(a) })),
  ];

  return (
    <AdminPage
      title="线路管理"
      actions={
        <>
          <button type="button" className="btn" onClick={resetHeat}>
            重置流量
          </button>
          <button
            type="button"
            className="btn btn-primary"
            onClick={() =>
              editor.edit(
                newLineDraft(
                  agents.rows.find((a) => a._id === agentFilter) ?? agents.rows[0],
                  entries.rows.length > 0,
                ),
              )
            }
          >
            添加
          </button>
        </>
      }
    >
      <div className="network-filter">
        <SelectField label="节点" value={agentFilter} options={filterOptions} onChange={filterBy} />
      </div>
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="线路列表" />
      {editor.dialog ? (
        <LineFormDialog
          key={editor.key}
          {...editor.dialog}
          agents={agents.rows}
          entries={entries.rows.map((e) => ({ value: e._id, label: e.name }))}
          permissions={permissions.rows.map((p) => ({ value: p._id, label: p.name }))}
        />
      ) : null}
      {confirmDialog}
    </AdminPage>
  );
}
