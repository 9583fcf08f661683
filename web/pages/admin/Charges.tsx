/**
 * /admin_charge (seed 001 §2.7, §4, §8): every withdrawal request with 结算 (after a confirmation,
 * optional transaction hash), 详情 (the payee's address), 留言 and 拒绝 (the money goes back to the
 * wallet); settle, details and refuse only while the request is open.
 */
import { useEffect, useState } from "react";
import { formatYuan, yuanToFen } from "../../../src/lib/money.ts";
import {
  type AdminWallet,
  type Charge,
  WalletMsg,
  WITHDRAWAL_STATUS_TEXT,
  WITHDRAWAL_STATUSES,
  type WithdrawalStatus,
} from "../../../src/modules/wallet/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { AdminPage, AdminTable, LoadingSpinner } from "../../components/admin/AdminPage.tsx";
import { useConfirm } from "../../components/admin/ConfirmDialog.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { toastResult } from "../../components/admin/feedback.ts";
import { TextAreaField } from "../../components/admin/inputs.tsx";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { copyToClipboard } from "../../components/clipboard.ts";
import { Dialog } from "../../components/Dialog.tsx";
import { Field } from "../../components/Field.tsx";
import { formatDateTime } from "../../components/format.ts";
import { Segmented } from "../../components/Segmented.tsx";
import type { Column } from "../../components/Table.tsx";
import { WithdrawalStatusBadge } from "../Wallet.tsx";

type Filter = WithdrawalStatus | "all";
type Action = { kind: "settle" | "details" | "message" | "refuse"; charge: Charge };

const yuan = (value: number) => formatYuan(yuanToFen(value));
const FILTERS: { key: Filter; label: string }[] = [
  { key: "all", label: "全部" },
  ...WITHDRAWAL_STATUSES.map((status) => ({ key: status, label: WITHDRAWAL_STATUS_TEXT[status] })),
];

function SettleDialog({
  charge,
  onClose,
  onDone,
}: {
  charge: Charge;
  onClose: () => void;
  onDone: () => void;
}) {
  const [txid, setTxid] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    const answer = await call("/api/admin/charge/checkout_charge", {
      charge_id: charge._id,
      txid: txid.trim(),
    });
    setBusy(false);
    if (toastResult(answer, WalletMsg.settled, WalletMsg.settleFailed)) onDone();
  };
  return (
    <FormDialog
      open
      title="结算确认"
      onClose={onClose}
      onSubmit={() => void submit()}
      busy={busy}
      submitText="确认结算"
      size="sm"
    >
      <p className="admin-confirm">
        确认已向 {charge.email} 的 {charge.addressType} 地址{" "}
        <code className="wallet-address">{charge.address}</code> 转账 <strong>{yuan(charge.money)} 元</strong>
        ？结算后不可撤销。
      </p>
      <Field
        label="交易哈希（可选）"
        name="txid"
        autoComplete="off"
        spellCheck={false}
        value={txid}
        onChange={(event) => setTxid(event.target.value)}
      />
    </FormDialog>
  );
}

function DetailsDialog({ charge, onClose }: { charge: Charge; onClose: () => void }) {
  const [wallet, setWallet] = useState<AdminWallet | null | "failed">(null);
  useEffect(() => {
    let current = true;
    void call("/api/admin/charge/wallet", { uid: charge.uid }).then((answer) => {
      if (current) setWallet(answer.code === Code.ok ? answer.data : "failed");
    });
    return () => {
      current = false;
    };
  }, [charge.uid]);
  return (
    <Dialog open onClose={onClose} title="收款详情" size="sm">
      {wallet === null ? (
        <LoadingSpinner />
      ) : wallet === "failed" ? (
        <p className="admin-hint">收款信息加载失败</p>
      ) : (
        <dl className="admin-details">
          <dt>用户</dt>
          <dd>{charge.email}</dd>
          <dt>提现金额</dt>
          <dd>{yuan(charge.money)} 元</dd>
          <dt>申请时地址</dt>
          <dd>
            {charge.addressType} <code className="wallet-address">{charge.address}</code>{" "}
            <button
              type="button"
              className="btn btn-small"
              onClick={() => void copyToClipboard(charge.address)}
            >
              复制
            </button>
          </dd>
          <dt>当前收款地址</dt>
          <dd data-testid="charge-current-address">
            {wallet.address ? `${wallet.addressType} ${wallet.address}` : "未填写"}
            {wallet.address && wallet.address !== charge.address ? (
              <p className="admin-hint">用户在申请后修改了地址，请按申请时地址转账或先留言确认</p>
            ) : null}
          </dd>
          <dt>钱包余额</dt>
          <dd>{yuan(wallet.money)} 元</dd>
        </dl>
      )}
    </Dialog>
  );
}

/** 留言 and 拒绝: one text field; 拒绝 asks once more before returning the money. */
function TextDialog({
  action,
  onClose,
  onDone,
}: {
  action: Action & { kind: "message" | "refuse" };
  onClose: () => void;
  onDone: () => void;
}) {
  const refuse = action.kind === "refuse";
  const [text, setText] = useState(refuse ? "" : action.charge.msg);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [confirm, confirmDialog] = useConfirm();

  const submit = async () => {
    if (text.trim() === "") return setError(refuse ? WalletMsg.reasonEmpty : WalletMsg.msgEmpty);
    if (refuse) {
      const ok = await confirm({
        title: "拒绝确认",
        message: `确认拒绝 ${action.charge.email} 的提现 ${yuan(action.charge.money)} 元？金额将退回用户钱包。`,
        confirmText: "确认拒绝",
      });
      if (!ok) return;
    }
    setBusy(true);
    const answer = refuse
      ? await call("/api/admin/charge/refuse_charge", { charge_id: action.charge._id, reason: text.trim() })
      : await call("/api/admin/charge/message", { charge_id: action.charge._id, msg: text.trim() });
    setBusy(false);
    const ok = refuse
      ? toastResult(answer, WalletMsg.refused, WalletMsg.refuseFailed)
      : toastResult(answer, WalletMsg.messaged, WalletMsg.messageFailed);
    if (ok) onDone();
  };

  return (
    <FormDialog
      open
      title={refuse ? "拒绝提现" : "留言"}
      onClose={onClose}
      onSubmit={() => void submit()}
      busy={busy}
      submitText={refuse ? "拒绝" : "保存"}
      size="sm"
    >
      <TextAreaField
        label={refuse ? "拒绝原因（用户可见）" : "留言（用户可见）"}
        value={text}
        error={error}
        onChange={(value) => {
          setText(value);
          setError(undefined);
        }}
      />
      {confirmDialog}
    </FormDialog>
  );
}

export function AdminChargesPage() {
  const [filter, setFilter] = useState<Filter>("all");
  const list = useRemoteList(
    (query: { status?: WithdrawalStatus }) => call("/api/admin/charge/charge_list", query),
    {},
  );
  const [action, setAction] = useState<Action | null>(null);
  const close = () => setAction(null);
  const done = () => {
    setAction(null);
    void list.reload();
  };

  const button = (kind: Action["kind"], label: string, charge: Charge, danger = false) => (
    <button
      type="button"
      className={`btn btn-small${danger ? " admin-danger-text" : ""}`}
      onClick={() => setAction({ kind, charge })}
    >
      {label}
    </button>
  );

  const columns: Column<Charge>[] = [
    { key: "email", title: "用户邮箱", render: (row) => row.email },
    { key: "money", title: "金额(元)", className: "admin-num", render: (row) => yuan(row.money) },
    { key: "status", title: "状态", render: (row) => <WithdrawalStatusBadge status={row.status} /> },
    { key: "request", title: "申请时间", render: (row) => formatDateTime(row.requestTime) },
    { key: "paid", title: "结算时间", render: (row) => (row.paidTime ? formatDateTime(row.paidTime) : "-") },
    { key: "msg", title: "留言", render: (row) => row.msg || "-" },
    {
      key: "actions",
      title: "操作",
      className: "admin-sticky-actions",
      render: (row) => (
        <div className="admin-row-actions">
          {row.status === "request" ? button("settle", "结算", row) : null}
          {row.status === "request" ? button("details", "详情", row) : null}
          {button("message", "留言", row)}
          {row.status === "request" ? button("refuse", "拒绝", row, true) : null}
        </div>
      ),
    },
  ];

  return (
    <AdminPage title="提现管理">
      <Segmented
        legend="按状态筛选"
        items={FILTERS}
        value={filter}
        onChange={(key) => {
          setFilter(key);
          void list.reload(key === "all" ? {} : { status: key });
        }}
      />
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="提现申请" />
      {action?.kind === "settle" ? (
        <SettleDialog charge={action.charge} onClose={close} onDone={done} />
      ) : null}
      {action?.kind === "details" ? <DetailsDialog charge={action.charge} onClose={close} /> : null}
      {action?.kind === "message" || action?.kind === "refuse" ? (
        <TextDialog action={{ ...action, kind: action.kind }} onClose={close} onDone={done} />
      ) : null}
    </AdminPage>
  );
}
