/** 重置订阅链接 (seed 000 §4, §8, §9): confirm, a new userkey, and every link rebuilt. */
import type { ReactNode } from "react";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { refreshUserInfo } from "../../session.ts";
import { useConfirm } from "../admin/ConfirmDialog.tsx";
import { TOAST_MEDIUM, toast } from "../Toast.tsx";

export const ResetMsg = {
  title: "重置订阅链接",
  confirm:
    "重置后，所有已订阅的设备都会断开连接，需要重新订阅。若重新订阅后新的链接暂时无法上网，请耐心等待，一小时内会自动恢复。确定要重置吗？",
  done: "订阅链接重置成功，请重新订阅。",
  keepSecret: "请妥善保管新的订阅链接，切勿泄露给他人，否则他人可使用您的流量。",
  refused: "该账号不允许这样操作。",
  failed: "重置失败，请稍后重试",
} as const;

/** `[reset, dialog]`: render `dialog`; `reset()` asks first and answers whether the key changed. */
export function useResetSubscription(): [() => Promise<boolean>, ReactNode] {
  const [confirm, dialog] = useConfirm();

  async function reset(): Promise<boolean> {
    if (!(await confirm({ title: ResetMsg.title, message: ResetMsg.confirm }))) return false;
    const answer = await call("/api/user/reset_userkey", {});
    if (answer.code === Code.ok) {
      toast.success(ResetMsg.done, TOAST_MEDIUM);
      toast.info(ResetMsg.keepSecret, TOAST_MEDIUM);
      await refreshUserInfo();
      return true;
    }
    if (answer.code === Code.accountRefused) toast.error(ResetMsg.refused, TOAST_MEDIUM);
    // The envelope client already told the user about network failures and expired sessions.
    else if (answer.code !== Code.network && answer.code !== Code.notLoggedIn) {
      toast.error(answer.msg || ResetMsg.failed, TOAST_MEDIUM);
    }
    return false;
  }

  return [reset, dialog];
}
