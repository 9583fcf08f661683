/**
 * /agency (issue 16 §5): an agency owner's page, its tab shown only to owners. It lists the
 * owner's customers with their traffic and gives one of them some of the owner's permanent
 * traffic (trial traffic cannot be given).
 */
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { formatGB } from "../../src/lib/traffic.ts";
import { type AgencyCustomer, type AgencyCustomers, AgencyMsg } from "../../src/modules/agency/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { SelectField } from "../components/admin/inputs.tsx";
import { Field } from "../components/Field.tsx";
import { formatDateTime } from "../components/format.ts";
import { Pager, usePaged } from "../components/Pager.tsx";
import { type Column, Table } from "../components/Table.tsx";
import { TOAST_SHORT, toast } from "../components/Toast.tsx";
import { refreshUserInfo } from "../session.ts";

const columns: Column<AgencyCustomer>[] = [
  { key: "email", title: "客户邮箱", render: (c) => c.email },
  { key: "traffic", title: "剩余流量(G)", render: (c) => formatGB(c.traffic) },
  { key: "spend", title: "已用流量(G)", render: (c) => formatGB(c.spendTraffic) },
  { key: "allocated", title: "已分配(G)", render: (c) => formatGB(c.allocated) },
  {
    key: "vip",
    title: "时间套餐到期",
    render: (c) => (c.vipExpireTime > Date.now() ? formatDateTime(c.vipExpireTime) : "无"),
  },
];

function CustomerTable({ customers }: { customers: AgencyCustomer[] }) {
  const { slice, pager } = usePaged(customers);
  return (
    <>
      <Table
        columns={columns}
        rows={slice}
        rowKey={(c) => c._id}
        caption="代理客户"
        empty={AgencyMsg.empty}
      />
      {pager.total > 0 ? <Pager {...pager} /> : null}
    </>
  );
}

export function AgencyPage() {
  const [data, setData] = useState<AgencyCustomers | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const [email, setEmail] = useState("");
  const [amount, setAmount] = useState("");
  const [amountError, setAmountError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    const answer = await call("/api/agency/customers", {});
    if (answer.code === Code.ok) setData(answer.data);
    else if (answer.code === Code.forbidden) setRefused(answer.msg);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  async function allocate(event: FormEvent) {
    event.preventDefault();
    const trafficG = Number(amount);
    if (amount.trim() === "" || !Number.isFinite(trafficG) || trafficG <= 0) {
      setAmountError("分配的流量须大于0");
      return;
    }
    if (data && trafficG < data.minAllocateG) {
      setAmountError(AgencyMsg.amountTooLow(data.minAllocateG));
      return;
    }
    setAmountError(undefined);
    setBusy(true);
    const customerEmail = email || data?.customers[0]?.email || "";
    const answer = await call("/api/agency/allocate", { email: customerEmail, trafficG });
    setBusy(false);
    if (answer.code === Code.ok) {
      toast.success(AgencyMsg.allocated(String(trafficG), answer.data.customerEmail), TOAST_SHORT);
      setAmount("");
      void load();
      void refreshUserInfo({ quiet: true });
    } else if (answer.code !== Code.network && answer.code !== Code.notLoggedIn) {
      toast.error(`${AgencyMsg.allocateFailed}:${answer.msg}`, TOAST_SHORT);
    }
  }

  if (refused) {
    return (
      <div className="page">
        <h1 className="page-title">代理中心</h1>
        <p className="card-note">{refused}</p>
      </div>
    );
  }
  if (!data) return <div className="spinner page-spinner" role="status" aria-label="加载中" />;
  const chosen = email || data.customers[0]?.email || "";
  return (
    <div className="page">
      <h1 className="page-title">代理中心{data.name ? ` · ${data.name}` : ""}</h1>
      <div className="card agency-summary">
        <span>可分配的永久流量</span>
        <strong className="agency-available" data-testid="agency-available">
          {formatGB(data.available)} G
        </strong>
        <span className="card-note">体验流量不可分配；分配后流量归客户所有。</span>
      </div>
      {data.customers.length > 0 ? (
        <form className="admin-filter records-filter" onSubmit={allocate} noValidate>
          <SelectField
            label="客户"
            className="agency-customer"
            value={chosen}
            options={data.customers.map((c) => ({ value: c.email, label: c.email }))}
            onChange={setEmail}
          />
          <Field
            label="流量(G)"
            type="number"
            min={data.minAllocateG}
            step="any"
            inputMode="decimal"
            placeholder={`最低 ${data.minAllocateG} G`}
            value={amount}
            error={amountError}
            onChange={(event) => setAmount(event.target.value)}
          />
          <button type="submit" className="btn btn-primary" disabled={busy}>
            分配
          </button>
        </form>
      ) : null}
      <CustomerTable customers={data.customers} />
    </div>
  );
}
