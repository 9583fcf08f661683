/**
 * 钱包 /wallet (seed 000 §2, §3 Wallet, §5 withdrawal rules, §8 1012): the balance with 提现
 * (the whole balance, after a confirmation), the USDT address form, the withdrawals with their
 * status and the admin's message, and the wallet ledger.
 */
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { formatYuan, yuanToFen } from "../../src/lib/money.ts";
import {
  ADDRESS_TYPES,
  type AddressType,
  addressShapeProblem,
  type SpendEntry,
  type Wallet,
  WalletMsg,
  WITHDRAWAL_STATUS_TEXT,
  type Withdrawal,
  type WithdrawalStatus,
} from "../../src/modules/wallet/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { type Answer, call } from "../api.ts";
import { useConfirm } from "../components/admin/ConfirmDialog.tsx";
import { SelectField } from "../components/admin/inputs.tsx";
import { Field } from "../components/Field.tsx";
import { formatDateTime } from "../components/format.ts";
import { LoginPrompt } from "../components/LoginPrompt.tsx";
import { Pager, usePaged } from "../components/Pager.tsx";
import { type Column, Table } from "../components/Table.tsx";
import { TOAST_SHORT, toast } from "../components/Toast.tsx";
import { refreshUserInfo, useSession } from "../session.ts";

const yuan = (value: number) => formatYuan(yuanToFen(value));

/** A refusal the server explained (1012 …); 502 and 1002 were already toasted by api.ts. */
function toastRefusal(answer: Answer<unknown>) {
  if (answer.code !== Code.network && answer.code !== Code.notLoggedIn) toast.error(answer.msg, TOAST_SHORT);
}

interface WalletData {
  wallet: Wallet;
  withdrawals: Withdrawal[];
  entries: SpendEntry[];
}

function useWalletData(userId: string): [WalletData | null, () => void] {
  const [data, setData] = useState<WalletData | null>(null);
  const load = useCallback(() => {
    if (!userId) return;
    void Promise.all([
      call("/api/wallet/mywallet", {}),
      call("/api/wallet/charge_list", {}),
      call("/api/wallet/spend_list", {}),
    ]).then(([wallet, withdrawals, entries]) => {
      if (wallet.code !== Code.ok) return toastRefusal(wallet);
      setData({
        wallet: wallet.data,
        withdrawals: withdrawals.code === Code.ok ? withdrawals.data : [],
        entries: entries.code === Code.ok ? entries.data : [],
      });
    });
  }, [userId]);
  useEffect(load, [load]);
  return [data, load];
}

const STATUS_TONE: Record<WithdrawalStatus, string> = {
  request: "admin-status-wait",
  paid: "admin-status-ok",
  refused: "admin-status-off",
};

/** 待结算 / 已结算 / 已拒绝, as the customer and the back office see it. */
export function WithdrawalStatusBadge({ status }: { status: WithdrawalStatus }) {
  return <span className={`badge ${STATUS_TONE[status]}`}>{WITHDRAWAL_STATUS_TEXT[status]}</span>;
}

const WITHDRAWAL_COLUMNS: Column<Withdrawal>[] = [
  { key: "money", title: "金额(元)", className: "num", render: (row) => yuan(row.money) },
  { key: "status", title: "状态", render: (row) => <WithdrawalStatusBadge status={row.status} /> },
  { key: "msg", title: "留言", render: (row) => row.msg || "-" },
  { key: "request", title: "申请时间", render: (row) => formatDateTime(row.requestTime) },
  { key: "paid", title: "结算时间", render: (row) => (row.paidTime ? formatDateTime(row.paidTime) : "-") },
  {
    key: "address",
    title: "收款地址",
    render: (row) => <code className="wallet-address">{row.address}</code>,
  },
  { key: "left", title: "余额(元)", className: "num", render: (row) => yuan(row.left) },
];

const ENTRY_COLUMNS: Column<SpendEntry>[] = [
  {
    key: "change",
    title: "变动(元)",
    className: "num",
    render: (row) => (row.spendMoney > 0 ? `+${yuan(row.spendMoney)}` : yuan(row.spendMoney)),
  },
  { key: "desc", title: "说明", render: (row) => row.desc },
  { key: "left", title: "余额(元)", className: "num", render: (row) => yuan(row.left) },
  { key: "time", title: "时间", render: (row) => formatDateTime(row.time) },
];

function PagedTable<T>({
  rows,
  columns,
  rowKey,
  caption,
}: {
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => string;
  caption: string;
}) {
  const { slice, pager } = usePaged(rows);
  return (
    <>
      <Table columns={columns} rows={slice} rowKey={rowKey} caption={caption} />
      {pager.total > 0 ? <Pager {...pager} /> : null}
    </>
  );
}

function AddressForm({ wallet, onSaved }: { wallet: Wallet; onSaved: () => void }) {
  const [type, setType] = useState<AddressType>(wallet.addressType || "USDT-TRC20");
  const [address, setAddress] = useState(wallet.address);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const problem = addressShapeProblem(type, address);
    if (problem) return setError(problem);
    setBusy(true);
    const answer = await call("/api/wallet/change_reward_adress", {
      addressType: type,
      address: address.trim(),
    });
    setBusy(false);
    if (answer.code !== Code.ok) {
      toastRefusal(answer);
      if (answer.code !== Code.network) setError(answer.msg);
      return;
    }
    toast.success(WalletMsg.addressSaved, TOAST_SHORT);
    onSaved();
  }

  return (
    <form className="form wallet-address-form" onSubmit={(event) => void submit(event)} noValidate>
      <SelectField
        label="地址类型"
        value={type}
        options={ADDRESS_TYPES.map((value) => ({ value, label: value }))}
        onChange={(value) => {
          setType(value);
          setError(undefined);
        }}
      />
      <Field
        label="收款地址"
        name="address"
        autoComplete="off"
        spellCheck={false}
        placeholder={type === "USDT-TRC20" ? "T 开头的 TRON 地址" : "0x 开头的以太坊地址"}
        value={address}
        error={error}
        onChange={(event) => {
          setAddress(event.target.value);
          setError(undefined);
        }}
      />
      <button type="submit" className="btn btn-primary" disabled={busy}>
        保存收款地址
      </button>
    </form>
  );
}

export function WalletPage() {
  const session = useSession();
  const [data, reload] = useWalletData(session.user?._id ?? "");
  const [confirm, confirmDialog] = useConfirm();
  const [busy, setBusy] = useState(false);

  async function withdraw(wallet: Wallet) {
    if (!wallet.address) return toast.error(WalletMsg.noAddress, TOAST_SHORT);
    if (wallet.money <= 0 || wallet.money < wallet.min_charge_money) {
      return toast.error(WalletMsg.belowMinimum(wallet.min_charge_money), TOAST_SHORT);
    }
    const ok = await confirm({
      title: "提现确认",
      message: WalletMsg.withdrawConfirm(yuan(wallet.money), `${wallet.addressType} ${wallet.address}`),
      confirmText: "确认提现",
      danger: false,
    });
    if (!ok) return;
    setBusy(true);
    const answer = await call("/api/wallet/make_charge", {});
    setBusy(false);
    if (answer.code === Code.ok) toast.success(WalletMsg.withdrawn, TOAST_SHORT);
    else toastRefusal(answer);
    reload();
    void refreshUserInfo();
  }

  if (session.ready && !session.user) {
    return (
      <div className="page">
        <h1 className="page-title">钱包</h1>
        <LoginPrompt note="登录后查看钱包余额与提现。" />
      </div>
    );
  }
  if (!data) return <div className="spinner page-spinner" role="status" aria-label="加载中" />;
  const { wallet } = data;
  return (
    <div className="page">
      <h1 className="page-title">钱包</h1>
      <div className="card-grid">
        <section className="card stat-card" aria-labelledby="wallet-balance">
          <h2 id="wallet-balance" className="card-title">
            钱包余额
          </h2>
          <p className="stat-main">
            <span className="stat-value" data-testid="wallet-money">
              {yuan(wallet.money)}
            </span>
            <span className="stat-unit"> 元</span>
          </p>
          <p className="stat-label">
            最低提现金额 {wallet.min_charge_money} 元，提现为全部余额，仅支持 USDT，一个工作日内结算。
          </p>
          <button
            type="button"
            className="btn btn-primary card-action"
            disabled={busy}
            onClick={() => void withdraw(wallet)}
          >
            提现
          </button>
        </section>
        <section className="card" aria-labelledby="wallet-address">
          <h2 id="wallet-address" className="card-title">
            提现账户
          </h2>
          <AddressForm key={`${wallet.addressType}:${wallet.address}`} wallet={wallet} onSaved={reload} />
        </section>
      </div>
      <h2 className="wallet-list-title">提现记录</h2>
      <PagedTable
        rows={data.withdrawals}
        columns={WITHDRAWAL_COLUMNS}
        rowKey={(row) => row._id}
        caption="提现记录"
      />
      <h2 className="wallet-list-title">钱包明细</h2>
      <PagedTable
        rows={data.entries}
        columns={ENTRY_COLUMNS}
        rowKey={(row) => String(row._id)}
        caption="钱包明细"
      />
      {confirmDialog}
    </div>
  );
}
