/**
 * The 支付 section's summary on /admin_config: which gateway collects each pay mode right now and
 * why — the settings below, or the FERRY_SANDBOX_PAY variable the server was started with (issue 12).
 */
import { PAY_MODE_TEXT } from "../../../src/modules/order/schema.ts";
import type { PayModeInForce, PaymentsInForce } from "../../../src/payments/registry.ts";

const OFF_HINT: Record<PayModeInForce["mode"], string> = {
  alipay: "在下方选择支付宝收款账户",
  wxpay: "在下方选择微信收款账户",
  usdt: "填写 USDT 收款地址后开启",
};

function collectorText(state: PaymentsInForce, entry: PayModeInForce): string {
  const provider = entry.provider;
  if (!provider) return `未开启（${OFF_HINT[entry.mode]}）`;
  if (provider.source === "env")
    return `${provider.label}（环境变量 ${state.sandbox.variable}=1，未配置真实网关时使用）`;
  return `${provider.label}（配置）`;
}

/** The sandbox switch's hint when the variable, not the setting, has turned it on. */
export function sandboxVariableHint(state: PaymentsInForce | null): string | undefined {
  if (state?.sandbox.source !== "env") return undefined;
  return `已由环境变量 ${state.sandbox.variable}=1 开启，此开关不起作用；演示与测试用，不会真实扣款`;
}

export function PaymentsInForceNote({ state }: { state: PaymentsInForce | null }) {
  if (!state) return null;
  const none = state.modes.every((entry) => entry.provider === null);
  return (
    <section className="admin-span pay-in-force" aria-label="当前生效的支付方式">
      <p className="field-label">当前生效的支付方式</p>
      <ul className="pay-in-force-list">
        {state.modes.map((entry) => (
          <li key={entry.mode} data-mode={entry.mode} className={entry.provider ? "" : "pay-in-force-off"}>
            <span className="pay-in-force-mode">{PAY_MODE_TEXT[entry.mode]}</span>
            <span>{collectorText(state, entry)}</span>
          </li>
        ))}
      </ul>
      {none ? <p className="admin-hint pay-in-force-warning">暂无可用的支付方式：客户无法下单。</p> : null}
    </section>
  );
}
