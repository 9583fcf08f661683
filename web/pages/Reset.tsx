import { type FormEvent, useState } from "react";
import { transformPassword } from "../../src/modules/user/password.ts";
import {
  ConfirmMsg,
  type FieldErrors,
  isEmpty,
  Msg,
  SUBSCRIPTION_LINK_MIN,
  validateResetForm,
} from "../../src/modules/user/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { AuthLayout, RESET_SELLING_POINTS, SELLING_POINTS } from "../components/AuthLayout.tsx";
import { Field, NewPasswordFields, SubmitButton } from "../components/Field.tsx";
import { TOAST_MEDIUM, toast } from "../components/Toast.tsx";
import { useSession } from "../session.ts";

export const GET_EMAIL_FAILED = "请检查订阅链接是否正确（若订阅链接被重置过，旧订阅链接无法使用）";
export const CHECK_EMAIL = "请检查邮箱是否正确";
export const REFUSED = "该账号不允许这样操作。";
const LINK_ERRORS = new Set(["DESCRIBE_URL_ERROR", "USER_NOT_EXIST"]);
/** Refusals no field of the form can fix: said on the form itself (they ask to contact the admin). */
const SITE_ERRORS = new Set<string>([ConfirmMsg.noMail, ConfirmMsg.noOrigin]);

type ResetField = "link" | "email" | "password" | "confirm";

export function ResetPage() {
  const host = useSession().host;
  const mailOff = host !== null && !host.resetByMail;
  const [link, setLink] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [errors, setErrors] = useState<FieldErrors<ResetField>>({});
  const [busy, setBusy] = useState(false);
  const [finding, setFinding] = useState(false);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [formError, setFormError] = useState("");

  async function recover() {
    const describUrl = link.trim();
    if (isEmpty(describUrl) || describUrl.length < SUBSCRIPTION_LINK_MIN) {
      setErrors({ link: Msg.subscriptionLinkFirst });
      return;
    }
    setFinding(true);
    const answer = await call("/api/user/get_email", { describUrl });
    setFinding(false);
    if (answer.code === Code.ok && typeof answer.data === "string") {
      setEmail(answer.data);
      setErrors({});
    } else if (answer.code !== Code.network) {
      setErrors({ link: GET_EMAIL_FAILED });
    }
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy || mailOff) return;
    const form = { link: link.trim(), email: email.trim(), password, confirm };
    const invalid = validateResetForm(form);
    setErrors(invalid);
    setFormError("");
    if (Object.keys(invalid).length > 0) return;
    setBusy(true);
    const answer = await call("/api/user/reset_password", {
      email: form.email,
      password: transformPassword(form.password),
      describUrl: form.link,
    });
    setBusy(false);
    if (answer.code === Code.ok) {
      setSentTo(form.email);
      return;
    }
    if (answer.code === Code.network) return;
    if (LINK_ERRORS.has(answer.msg)) {
      setErrors({ link: Msg.subscriptionLinkInvalid });
    } else if (SITE_ERRORS.has(answer.msg)) {
      setFormError(answer.msg);
    } else if (answer.code === Code.accountRefused) {
      toast.error(REFUSED, TOAST_MEDIUM);
    } else {
      setErrors({ email: CHECK_EMAIL });
      // The server may know more (rate limit…): say it too.
      if (answer.msg) toast.error(answer.msg, TOAST_MEDIUM);
    }
  }

  const points = [...SELLING_POINTS, ...RESET_SELLING_POINTS];

  if (sentTo !== null) {
    return (
      <AuthLayout points={points}>
        <div className="result result-ok" role="status">
          <div className="result-icon" aria-hidden="true">
            ✉
          </div>
          <h1 className="auth-title">确认邮件已发送</h1>
          <p className="result-text">
            我们已向 <strong>{sentTo}</strong> 发送了一封确认邮件。请在 24
            小时内打开邮件中的链接，并在打开的页面上再次输入新密码，密码才会修改。
          </p>
          <a className="btn btn-primary btn-block" href="#/login">
            去登录
          </a>
        </div>
      </AuthLayout>
    );
  }

  return (
    <AuthLayout points={points}>
      <h1 className="auth-title">找回密码</h1>
      {mailOff ? (
        <div className="pay-none" role="note">
          <p>{ConfirmMsg.resetNeedsSupport}</p>
          {host.contact_info ? <p>联系方式：{host.contact_info}</p> : null}
          <p>可先用订阅链接找回账号邮箱，告诉客服。</p>
        </div>
      ) : (
        <p className="auth-subtitle">用您的订阅链接证明账号归属，确认邮件会发送到注册邮箱</p>
      )}
      <form className="form" onSubmit={submit} noValidate>
        <Field
          label="订阅链接"
          name="describUrl"
          autoComplete="off"
          placeholder="粘贴任一客户端的订阅链接"
          value={link}
          error={errors.link}
          onChange={(event) => setLink(event.target.value)}
          addon={
            <button type="button" className="btn btn-ghost" onClick={recover} disabled={finding}>
              {finding ? "查找中…" : "找回账号"}
            </button>
          }
        />
        <Field
          label="邮箱"
          type="email"
          name="email"
          autoComplete="email"
          placeholder="注册邮箱（可用找回账号自动填写）"
          value={email}
          error={errors.email}
          onChange={(event) => setEmail(event.target.value)}
        />
        {mailOff ? null : (
          <>
            <NewPasswordFields
              labels={["新密码", "确认新密码"]}
              placeholders={["至少 8 位", "再次输入新密码"]}
              password={password}
              confirm={confirm}
              errors={errors}
              onPassword={setPassword}
              onConfirm={setConfirm}
            />
            {formError ? (
              <p className="field-error" role="alert">
                {formError}
              </p>
            ) : null}
            <SubmitButton busy={busy} busyText="提交中…">
              确认修改
            </SubmitButton>
          </>
        )}
      </form>
      <div className="auth-links">
        <a href="#/login">想起密码了？去登录</a>
        <a href="#/register">注册新账号</a>
      </div>
    </AuthLayout>
  );
}
