import { Code } from "../../../src/rpc/codes.ts";
import type { Answer } from "../../api.ts";
import { TOAST_SHORT, toast } from "../Toast.tsx";

/**
 * The success toast of every back-office add/edit dialog, the same on every screen (issue 26 D14):
 * a draft without an id becomes a new record (添加, 复制, 批量生成), one with an id is updated.
 */
export const SaveToast = { added: "添加成功", updated: "更新成功" } as const;
export const savedToast = (draft: { _id?: string }) => (draft._id ? SaveToast.updated : SaveToast.added);

/**
 * The back office's save/delete toasts (seed 001 §8, 2 s): `success` on code 0, otherwise
 * `failure:{server message}`. Network failures and expired sessions already toasted in api.ts.
 */
export function toastResult(answer: Answer<unknown>, success: string, failure: string): boolean {
  if (answer.code === Code.ok) {
    toast.success(success, TOAST_SHORT);
    return true;
  }
  toastFailure(answer, failure);
  return false;
}

/** Only the failure toast, for calls whose success shows itself (a dialog opens, …). */
export function toastFailure(answer: Answer<unknown>, failure: string) {
  if (answer.code !== Code.ok && answer.code !== Code.network && answer.code !== Code.notLoggedIn) {
    toast.error(`${failure}:${answer.msg}`, TOAST_SHORT);
  }
}
