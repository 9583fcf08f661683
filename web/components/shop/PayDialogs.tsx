/** The payment dialogs of the shop (seed 000 §2): QR code, app link, USDT address. */
import { type ReactNode, useEffect, useState } from "react";
import { isPayLink } from "../../../src/lib/links.ts";
import { OrderMsg, PAY_MODE_TEXT, type PayMode, type PayResult } from "../../../src/modules/order/schema.ts";
import { copyToClipboard } from "../clipboard.ts";
import { Dialog } from "../Dialog.tsx";
import { QrCanvas } from "../QrDialog.tsx";
import { appLinkTarget, formatCountdown, type PayDialogKind, qrInstruction, yuan } from "./format.ts";

export interface PayDialogProps {
  result: PayResult;
  payMode: PayMode;
  mobile: boolean;
  onClose: () => void;
}

function SandboxMark({ sandbox }: { sandbox: boolean }) {
  if (!sandbox) return null;
  return (
    <p className="pay-sandbox" role="note">
      <strong>{OrderMsg.sandboxMark}</strong>
      <span>仅用于演示和测试，不会真实扣款</span>
    </p>
  );
}

function PayAmount({ result }: { result: PayResult }) {
  return (
    <p className="pay-amount">
      应付金额 <strong>{yuan(result.request_pay_amound)}</strong>
    </p>
  );
}

function PayWaiting() {
  return (
    <p className="pay-waiting">
      <span className="spinner pay-spinner" aria-hidden="true" />
      支付完成后将自动确认，请勿关闭此窗口
    </p>
  );
}

const closeFooter = (onClose: () => void) => (
  <button type="button" className="btn" onClick={onClose}>
    关闭
  </button>
);

/** A dialog waiting for the payment: `children`, then 支付完成后将自动确认; only 关闭 closes it. */
function WaitingPayDialog({
  result,
  title,
  size = "sm",
  onClose,
  children,
}: {
  result: PayResult;
  title: string;
  size?: "sm" | "md";
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    <Dialog
      open
      onClose={onClose}
      title={title}
      size={size}
      closeOnBackdrop={false}
      className={result.sandbox ? "pay-dialog pay-dialog-sandbox" : "pay-dialog"}
      footer={closeFooter(onClose)}
    >
      {children}
      <PayWaiting />
    </Dialog>
  );
}

export function QrPayDialog({ result, payMode, mobile, onClose }: PayDialogProps) {
  return (
    <WaitingPayDialog result={result} title={`${PAY_MODE_TEXT[payMode]}扫码支付`} onClose={onClose}>
      <SandboxMark sandbox={result.sandbox} />
      <PayAmount result={result} />
      <p className="qr-description">{qrInstruction(payMode, mobile)}</p>
      <QrCanvas value={result.qrcode} label="支付二维码" />
      {result.payurl ? (
        <p className="pay-link">
          <a href={result.payurl} target="_blank" rel="noopener noreferrer">
            打开支付页面
          </a>
        </p>
      ) : null}
    </WaitingPayDialog>
  );
}

const APP_NAME: Record<PayMode, string> = { alipay: "支付宝", wxpay: "微信", usdt: "支付页面" };

/** An app scheme or a pay page opened by a button: on a phone the page itself goes there. */
export function AppLinkDialog({ result, payMode, mobile, onClose }: PayDialogProps) {
  const target = appLinkTarget(result);
  const app = APP_NAME[payMode];
  const open = () => {
    if (mobile) location.href = target;
    else window.open(target, "_blank", "noopener");
  };
  return (
    <WaitingPayDialog result={result} title={`${PAY_MODE_TEXT[payMode]}支付`} onClose={onClose}>
      <SandboxMark sandbox={result.sandbox} />
      <PayAmount result={result} />
      <p className="qr-description">点击下方按钮打开{app}完成支付，支付完成后回到本页面等待确认。</p>
      <button type="button" className="btn btn-primary btn-block" onClick={open}>
        打开{app}
      </button>
    </WaitingPayDialog>
  );
}

/** The USDT-TRC20 instructions: exact amount, network, address (copy + QR), time left, warnings. */
export function UsdtPayBody({ result, now }: { result: PayResult; now: number }) {
  const left = result.expireTime - now;
  const amount = result.request_pay_amound_usdt;
  return (
    <div className="usdt-pay">
      <SandboxMark sandbox={result.sandbox} />
      <div className="usdt-row">
        <span className="usdt-label">转账金额</span>
        <div className="usdt-value">
          <strong className="usdt-amount">{amount}</strong> USDT
          <button
            type="button"
            className="btn btn-small"
            onClick={() => void copyToClipboard(amount)}
            aria-label="复制金额"
          >
            复制
          </button>
        </div>
        <span className="usdt-note">约 {yuan(result.request_pay_amound)}，精确到小数点后3位</span>
      </div>
      <div className="usdt-row">
        <span className="usdt-label">网络</span>
        <strong>{result.usdtNetwork || "TRC20"}</strong>
      </div>
      <div className="usdt-row">
        <span className="usdt-label">收款地址</span>
        <div className="usdt-value">
          <code className="usdt-address">{result.usdtAdress}</code>
          <button
            type="button"
            className="btn btn-small"
            onClick={() => void copyToClipboard(result.usdtAdress)}
            aria-label="复制地址"
          >
            复制
          </button>
        </div>
      </div>
      <QrCanvas value={result.usdtAdress} label="收款地址二维码" />
      {result.expireTime > 0 ? (
        <p className={`usdt-countdown${left <= 0 ? " usdt-expired" : ""}`} role="timer">
          {left > 0 ? (
            <>
              剩余支付时间 <strong>{formatCountdown(left)}</strong>
            </>
          ) : (
            OrderMsg.usdtExpired
          )}
        </p>
      ) : null}
      <div className="pay-warning" role="note">
        <p>{OrderMsg.usdtExactAmount}</p>
        <p>{OrderMsg.usdtExchangeWarning}</p>
      </div>
    </div>
  );
}

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

export function UsdtPayDialog({ result, onClose }: PayDialogProps) {
  const now = useNow(1000);
  return (
    <WaitingPayDialog result={result} title="USDT-TRC20 支付" size="md" onClose={onClose}>
      <UsdtPayBody result={result} now={now} />
    </WaitingPayDialog>
  );
}

/** Shown instead of a pay dialog whose link has another scheme than http(s) or a wallet app's. */
function UnsafeLinkDialog({ onClose }: { onClose: () => void }) {
  return (
    <Dialog open onClose={onClose} title="无法打开支付" size="sm" footer={closeFooter(onClose)}>
      <p role="alert">{OrderMsg.unsafePayLink}</p>
    </Dialog>
  );
}

/** The server refuses such links already; the SPA never shows or opens one either (issue 11). */
const hasUnsafeLink = (result: PayResult) =>
  [result.payurl, result.qrcode, result.urlscheme].some((link) => link !== "" && !isPayLink(link));

export function PayDialog({ kind, ...props }: PayDialogProps & { kind: PayDialogKind }) {
  if (kind !== "usdt" && hasUnsafeLink(props.result)) return <UnsafeLinkDialog onClose={props.onClose} />;
  if (kind === "qr") return <QrPayDialog {...props} />;
  if (kind === "applink") return <AppLinkDialog {...props} />;
  if (kind === "usdt") return <UsdtPayDialog {...props} />;
  return null;
}
