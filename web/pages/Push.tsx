import { useCallback, useEffect, useState } from "react";
import { formatGB, GB } from "../../src/lib/traffic.ts";
import {
  PUSH_STATE_TEXT,
  type Push,
  type PushList,
  PushMsg,
  receiveBytes,
} from "../../src/modules/push/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import type { Answer } from "../api.ts";
import { call } from "../api.ts";
import { useConfirm } from "../components/admin/ConfirmDialog.tsx";
import { copyToClipboard } from "../components/clipboard.ts";
import { Dialog } from "../components/Dialog.tsx";
import { CodeField, Field } from "../components/Field.tsx";
import { formatDateTime } from "../components/format.ts";
import { LoginPrompt } from "../components/LoginPrompt.tsx";
import { Pager, usePaged } from "../components/Pager.tsx";
import { SubmitDialog } from "../components/SubmitDialog.tsx";
import { type Column, Table } from "../components/Table.tsx";
import { TOAST_SHORT, toast } from "../components/Toast.tsx";
import { refreshUserInfo, useSession } from "../session.ts";

/** G on the wire, two decimals on screen (seed 000 §9). */
const showG = (g: number) => formatGB(g * GB);
const percent = (rate: number) => `${Number((rate * 100).toFixed(2))}%`;

/** A refusal the server explained (1037–1040, 999 …); 502 and 1002 were already toasted by api.ts. */
function toastRefusal(answer: Answer<unknown>) {
  if (answer.code !== Code.network && answer.code !== Code.notLoggedIn) toast.error(answer.msg, TOAST_SHORT);
}

function rulesText(info: PushList): string {
  const rate = percent(info.costRate);
  return (
    `最低转赠 ${info.minPushNum} G，手续费率 ${rate}，接收方实际到账 = 转赠量 × (1 − ${rate})。` +
    `只有永久流量可以转赠，体验流量不可转赠。转赠码 ${info.returnDays} 天内无人领取自动全额退回，领取前可随时撤回。`
  );
}

function CodeCell({ push }: { push: Push }) {
  if (push.direction === "received") return <span className="push-muted">—</span>;
  return (
    <span className="push-code-cell">
      <code className="push-code">{push.code}</code>
      {push.state === "created" ? (
        <button type="button" className="btn btn-small" onClick={() => void copyToClipboard(push.code)}>
          复制
        </button>
      ) : null}
    </span>
  );
}

/** Status and amounts first: on a phone the table scrolls sideways and the time matters least. */
function columns(onCancel: (push: Push) => void): Column<Push>[] {
  return [
    {
      key: "direction",
      title: "类型",
      render: (push) => (push.direction === "sent" ? "转出" : "转入"),
    },
    { key: "push", title: "转赠 (G)", className: "num", render: (push) => showG(push.pushNumber) },
    { key: "receive", title: "到账 (G)", className: "num", render: (push) => showG(push.receiveNumber) },
    {
      key: "state",
      title: "状态",
      render: (push) => (
        <span className={`push-state push-state-${push.state}`}>
          {PUSH_STATE_TEXT[push.state]}
          {push.state === "created" && push.returnTime ? (
            <small className="push-muted">{formatDateTime(push.returnTime)} 前未领取自动退回</small>
          ) : null}
        </span>
      ),
    },
    { key: "code", title: "转赠码", render: (push) => <CodeCell push={push} /> },
    {
      key: "action",
      title: "操作",
      render: (push) =>
        push.direction === "sent" && push.state === "created" ? (
          <button type="button" className="btn btn-small" onClick={() => onCancel(push)}>
            撤回
          </button>
        ) : null,
    },
    { key: "time", title: "时间", render: (push) => formatDateTime(push.createTime) },
  ];
}

function PushTable({ pushes, onCancel }: { pushes: Push[]; onCancel: (push: Push) => void }) {
  const { slice, pager } = usePaged(pushes);
  return (
    <>
      <Table
        columns={columns(onCancel)}
        rows={slice}
        rowKey={(push) => push._id}
        caption="转赠记录"
        empty={PushMsg.empty}
      />
      <Pager {...pager} />
    </>
  );
}

/** 转赠流量: the amount, what the receiver will get, then the code to pass on. */
function CreateDialog({
  info,
  available,
  onClose,
  onCreated,
}: {
  info: PushList;
  available: number;
  onClose: () => void;
  onCreated: () => void;
}) {
  const [amount, setAmount] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [push, setPush] = useState<Push | null>(null);
  const g = Number(amount);
  const preview = amount !== "" && Number.isFinite(g) && g > 0 ? receiveBytes(g * GB, info.costRate) : null;

  async function submit() {
    if (amount.trim() === "" || !Number.isFinite(g)) {
      setError(PushMsg.amountEmpty);
      return;
    }
    setBusy(true);
    const answer = await call("/api/push/create", { pushNumber: g });
    setBusy(false);
    if (answer.code !== Code.ok) {
      toastRefusal(answer);
      if (answer.code !== Code.network) setError(answer.msg);
      return;
    }
    setPush(answer.data);
    toast.success(PushMsg.created, TOAST_SHORT);
    onCreated();
  }

  if (push) {
    return (
      <Dialog
        open
        onClose={onClose}
        title="转赠成功"
        size="sm"
        footer={
          <button type="button" className="btn btn-primary" onClick={onClose}>
            完成
          </button>
        }
      >
        <p className="card-note">
          请把转赠码发给对方，对方在「接收转赠」中输入即可领取 {showG(push.receiveNumber)} G。
          {info.returnDays} 天内无人领取将自动退回，领取前您也可以在列表中撤回。
        </p>
        <div className="push-code-box">
          <code className="push-code push-code-big" data-testid="push-new-code">
            {push.code}
          </code>
          <button
            type="button"
            className="btn btn-primary"
            data-autofocus
            onClick={() => void copyToClipboard(push.code)}
          >
            复制转赠码
          </button>
        </div>
      </Dialog>
    );
  }
  return (
    <SubmitDialog
      open
      onClose={onClose}
      title="转赠流量"
      size="sm"
      closeOnBackdrop={false}
      submitText="生成转赠码"
      busy={busy}
      onSubmit={() => void submit()}
    >
      <Field
        label="转赠量 (G)"
        name="pushNumber"
        type="number"
        inputMode="numeric"
        min={info.minPushNum}
        step={1}
        placeholder={`最低 ${info.minPushNum} G，整数`}
        value={amount}
        error={error}
        data-autofocus
        onChange={(event) => {
          setAmount(event.target.value);
          setError(undefined);
        }}
      />
      <p className="card-note push-preview">
        可转赠永久流量 {formatGB(available)} G（体验流量不可转赠）
        <br />
        手续费率 {percent(info.costRate)}，对方实际到账{" "}
        <strong>{preview === null ? "—" : `${formatGB(preview)} G`}</strong>
      </p>
    </SubmitDialog>
  );
}

/** 接收转赠: a code in, the credited amount out. */
function ReceiveDialog({ onClose, onReceived }: { onClose: () => void; onReceived: () => void }) {
  const [code, setCode] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit() {
    if (code.trim() === "") {
      setError(PushMsg.codeEmpty);
      return;
    }
    setBusy(true);
    const answer = await call("/api/push/receive", { code });
    setBusy(false);
    if (answer.code !== Code.ok) {
      toastRefusal(answer);
      if (answer.code !== Code.network) setError(answer.msg);
      return;
    }
    toast.success(PushMsg.received(showG(answer.data.receiveNumber)), TOAST_SHORT);
    onReceived();
    onClose();
  }

  return (
    <SubmitDialog
      open
      onClose={onClose}
      title="接收转赠"
      size="sm"
      closeOnBackdrop={false}
      submitText="领取"
      busy={busy}
      onSubmit={() => void submit()}
    >
      <CodeField
        label="转赠码"
        placeholder="请输入对方发给您的转赠码"
        value={code}
        error={error}
        onChange={(event) => {
          setCode(event.target.value);
          setError(undefined);
        }}
      />
    </SubmitDialog>
  );
}

/** The caller's transfers and the rules in force; null while loading. */
function usePushList(userId: string): [PushList | null, () => void] {
  const [info, setInfo] = useState<PushList | null>(null);
  const load = useCallback(() => {
    if (!userId) return;
    void call("/api/push/list", {}).then((answer) => {
      if (answer.code === Code.ok) setInfo(answer.data);
      else toastRefusal(answer);
    });
  }, [userId]);
  useEffect(load, [load]);
  return [info, load];
}

export function PushPage() {
  const session = useSession();
  const user = session.user;
  const [info, reload] = usePushList(user?._id ?? "");
  const [dialog, setDialog] = useState<"create" | "receive" | null>(null);
  const [confirm, confirmDialog] = useConfirm();

  const changed = () => {
    reload();
    void refreshUserInfo();
  };

  async function cancel(push: Push) {
    const ok = await confirm({
      title: "撤回转赠",
      message: PushMsg.cancelConfirm,
      confirmText: "撤回",
      danger: false,
    });
    if (!ok) return;
    const answer = await call("/api/push/cancel", { code: push.code });
    if (answer.code === Code.ok) toast.success(PushMsg.cancelled, TOAST_SHORT);
    else toastRefusal(answer);
    changed();
  }

  if (session.ready && !user) {
    return (
      <div className="page">
        <h1 className="page-title">流量转赠</h1>
        <LoginPrompt
          title="登录后转赠流量"
          note="登录后可把永久流量转赠给其他用户，或领取别人转赠给您的流量。"
        />
      </div>
    );
  }
  const available = user ? Math.max(0, user.traffic - user.trialTraffic) : 0;
  return (
    <div className="page">
      <h1 className="page-title">流量转赠</h1>
      <section className="card push-summary" aria-labelledby="push-available">
        <div className="push-summary-main">
          <h2 id="push-available" className="card-title">
            可转赠永久流量
          </h2>
          <p className="stat-main">
            <span className="stat-value" data-testid="push-available">
              {formatGB(available)}
            </span>
            <span className="stat-unit"> GB</span>
          </p>
          {info ? <p className="card-note">{rulesText(info)}</p> : null}
        </div>
        <div className="push-actions">
          <button
            type="button"
            className="btn btn-primary"
            disabled={!info}
            onClick={() => setDialog("create")}
          >
            转赠流量
          </button>
          <button type="button" className="btn" disabled={!info} onClick={() => setDialog("receive")}>
            接收转赠
          </button>
        </div>
      </section>
      <h2 className="push-list-title">转赠记录</h2>
      {info === null ? (
        <div className="spinner page-spinner" role="status" aria-label="加载中" />
      ) : info.pushList.length === 0 ? (
        <p className="table-wrap push-empty">{PushMsg.empty}</p>
      ) : (
        <PushTable pushes={info.pushList} onCancel={(push) => void cancel(push)} />
      )}
      {dialog === "create" && info ? (
        <CreateDialog info={info} available={available} onClose={() => setDialog(null)} onCreated={changed} />
      ) : null}
      {dialog === "receive" ? <ReceiveDialog onClose={() => setDialog(null)} onReceived={changed} /> : null}
      {confirmDialog}
    </div>
  );
}
