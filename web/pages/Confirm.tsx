import { type FormEvent, useEffect, useRef, useState } from "react";
import { transformPassword } from "../../src/modules/user/password.ts";
import {
  ConfirmMsg,
  type ConfirmPasswordInput,
  type FieldErrors,
  validateNewPasswordForm,
} from "../../src/modules/user/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { getJson, NETWORK_ERROR_TOAST } from "../api.ts";
import { NewPasswordFields, SubmitButton } from "../components/Field.tsx";
import { TOAST_SHORT, toast } from "../components/Toast.tsx";
import { go } from "../lib/nav.ts";
import { hashPathAndQuery } from "../lib/query.ts";
import { refreshUserInfo } from "../session.ts";

export const CONFIRM_REDIRECT_MS = 3000;

type AccountAnswer = { Code: number; msg: string };
type Status = { kind: "pending" } | { kind: "form" } | { kind: "ok" } | { kind: "fail"; msg: string };

/** Answers after which the link cannot be used again: the page stops offering the form. */
const DEAD_LINK = new Set<string>([
  ConfirmMsg.invalid,
  ConfirmMsg.used,
  ConfirmMsg.expired,
  ConfirmMsg.triesUsedUp,
]);

/** `POST /api/account/change_password`; null (after a toast) when no answer came back. */
async function confirmPasswordChange(input: ConfirmPasswordInput): Promise<AccountAnswer | null> {
  try {
    const response = await fetch("/api/account/change_password", {
      method: "POST",
      credentials: "include",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(input),
    });
    if (!response.ok) throw new Error(String(response.status));
    return (await response.json()) as AccountAnswer;
  } catch {
    toast.error(NETWORK_ERROR_TOAST, TOAST_SHORT);
    return null;
  }
}

/**
 * Opens a mailed confirmation link: `/#/confirm?serial_id&key&action`. A sign-up link confirms as
 * the page opens. A password change is applied only after the new password is typed again here,
 * so opening a mail someone else caused (with their password in it) changes nothing.
 */
export function ConfirmPage() {
  const query = hashPathAndQuery().query;
  const serialId = query.get("serial_id") ?? "";
  const key = query.get("key") ?? "";
  const changePassword = query.get("action") === "change_password";
  const [status, setStatus] = useState<Status>(
    !serialId || !key
      ? { kind: "fail", msg: ConfirmMsg.invalid }
      : changePassword
        ? { kind: "form" }
        : { kind: "pending" },
  );
  const started = useRef(false);

  useEffect(() => {
    if (status.kind !== "pending" || started.current) return;
    started.current = true;
    const params = new URLSearchParams({ serial_id: serialId, key });
    void getJson<AccountAnswer>(`/api/account/signup_confirm?${params}`).then((answer) => {
      if (answer?.Code === Code.ok) setStatus({ kind: "ok" });
      else setStatus({ kind: "fail", msg: answer?.msg ?? "网络错误" });
    });
  }, [status.kind, serialId, key]);

  useEffect(() => {
    if (status.kind !== "ok") return;
    // A password change ended every other session and logged this browser in; learn who we are.
    if (changePassword) void refreshUserInfo({ quiet: true });
    const timer = setTimeout(() => go("/", { replace: true }), CONFIRM_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [status.kind, changePassword]);

  return (
    <div className="page page-narrow">
      <section className="card result-card">
        {status.kind === "form" ? (
          <PasswordAgainForm
            serialId={serialId}
            linkKey={key}
            onDone={() => setStatus({ kind: "ok" })}
            onDeadLink={(msg) => setStatus({ kind: "fail", msg })}
          />
        ) : status.kind === "pending" ? (
          <div className="result" role="status">
            <div className="spinner" aria-hidden="true" />
            <h1 className="result-title">正在确认…</h1>
          </div>
        ) : status.kind === "ok" ? (
          <div className="result result-ok" role="status">
            <div className="result-icon" aria-hidden="true">
              ✓
            </div>
            <h1 className="result-title">
              {changePassword ? "密码修改成功，3秒后跳转" : "注册成功，3秒后跳转"}
            </h1>
            <div className="result-actions">
              <a className="btn btn-primary" href={changePassword ? "#/" : "#/login"}>
                {changePassword ? "进入首页" : "直接登录"}
              </a>
            </div>
          </div>
        ) : (
          <div className="result result-fail" role="alert">
            <div className="result-icon" aria-hidden="true">
              !
            </div>
            <h1 className="result-title">{changePassword ? "密码修改失败" : "注册失败"}</h1>
            <p className="result-text">{status.msg}</p>
            <div className="result-actions">
              <a className="btn btn-primary" href="#/login">
                直接登录
              </a>
              {changePassword ? (
                <a className="btn" href="#/reset">
                  重新申请
                </a>
              ) : (
                <a className="btn" href="#/register">
                  重新注册
                </a>
              )}
            </div>
          </div>
        )}
      </section>
    </div>
  );
}

function PasswordAgainForm(props: {
  serialId: string;
  linkKey: string;
  onDone(): void;
  onDeadLink(msg: string): void;
}) {
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [errors, setErrors] = useState<FieldErrors<"password" | "confirm">>({});
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    const invalid = validateNewPasswordForm({ password, confirm });
    setErrors(invalid);
    if (invalid.password || invalid.confirm) return;
    setBusy(true);
    const answer = await confirmPasswordChange({
      serial_id: props.serialId,
      key: props.linkKey,
      password: transformPassword(password),
    });
    setBusy(false);
    if (!answer) return;
    if (answer.Code === Code.ok) props.onDone();
    else if (DEAD_LINK.has(answer.msg) || answer.Code === Code.notFound) props.onDeadLink(answer.msg);
    else setErrors({ password: answer.msg });
  }

  return (
    <form className="form" onSubmit={submit} noValidate>
      <h1 className="auth-title">确认修改密码</h1>
      <p className="auth-subtitle">
        请再次输入您在找回密码页面填写的新密码，输入一致后密码才会修改。如果您没有申请修改密码，请直接关闭本页，您的密码不会改变。
      </p>
      <NewPasswordFields
        labels={["新密码", "确认新密码"]}
        placeholders={["再次输入申请时填写的新密码", "再输入一次"]}
        password={password}
        confirm={confirm}
        errors={errors}
        onPassword={setPassword}
        onConfirm={setConfirm}
      />
      <SubmitButton busy={busy} busyText="提交中…">
        确认修改
      </SubmitButton>
    </form>
  );
}
