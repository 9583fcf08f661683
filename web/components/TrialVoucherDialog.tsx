/**
 * The 体验券 modal (seed 000 §2 trial voucher modal, §4 coupon modal, §5 trial coupon rule, §8
 * messages): a code already redeemed on this device (the local couponRecords table) is refused
 * here with 请勿重复使用; the server decides everything else. Its own chunk, fetched when the
 * header's 体验券 button is first pressed (TrialVoucher.tsx).
 */
import { useState } from "react";
import { REDEEM_COUPON_CALL, RedeemMsg, redeemSuccessText } from "../../src/modules/coupon/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { couponRecords } from "../lib/localTable.ts";
import { refreshUserInfo } from "../session.ts";
import { CodeField } from "./Field.tsx";
import { SubmitDialog } from "./SubmitDialog.tsx";
import { TOAST_MEDIUM, toast } from "./Toast.tsx";

/** The refusals whose server message the customer is shown as it is (seed 000 §8). */
const SHOWN_CODES: readonly number[] = [
  Code.couponNotFound,
  Code.couponUsedUp,
  Code.couponExhausted,
  Code.couponWrongType,
  Code.couponExpired,
];

const usedOnThisDevice = (code: string) =>
  couponRecords.all().some((row) => row.code.toUpperCase() === code.toUpperCase());

export function TrialVoucherDialog({ onClose }: { onClose: () => void }) {
  const [code, setCode] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit() {
    const trimmed = code.trim();
    if (trimmed === "") return setError(RedeemMsg.empty);
    if (usedOnThisDevice(trimmed)) return setError(RedeemMsg.usedOnThisDevice);
    setBusy(true);
    try {
      const answer = await call(REDEEM_COUPON_CALL, { code: trimmed });
      if (answer.code === Code.ok) {
        couponRecords.add({ code: trimmed, time: Date.now() });
        toast.success(redeemSuccessText(answer.data), TOAST_MEDIUM);
        await refreshUserInfo();
        onClose();
        return;
      }
      if (answer.code === Code.couponUsedUp) couponRecords.add({ code: trimmed, time: Date.now() });
      if (answer.code === Code.notLoggedIn) return onClose(); // the envelope client took over
      if (SHOWN_CODES.includes(answer.code)) return setError(answer.msg);
      setError(RedeemMsg.tooManyTries);
      toast.error(RedeemMsg.failedToast);
    } finally {
      setBusy(false);
    }
  }

  return (
    <SubmitDialog
      open
      onClose={onClose}
      title="兑换体验券"
      size="sm"
      className="trial-voucher-dialog"
      submitText="确定"
      busy={busy}
      onSubmit={() => void submit()}
    >
      <CodeField
        label="激活码"
        placeholder="请输入体验券激活码"
        value={code}
        error={error}
        onChange={(event) => {
          setCode(event.target.value);
          setError(undefined);
        }}
      />
      <p className="card-note">体验券可兑换流量或时长套餐；限时体验流量到期后未用完的部分将被清除。</p>
    </SubmitDialog>
  );
}
