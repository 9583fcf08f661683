import { type FormEvent, useEffect, useState } from "react";
import { transformPassword } from "../../src/modules/user/password.ts";
import { type FieldErrors, Msg, validateRegisterForm } from "../../src/modules/user/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { COOKIE_DAYS } from "../../src/rpc/cookies.ts";
import { call } from "../api.ts";
import { AuthLayout } from "../components/AuthLayout.tsx";
import { EmailField, NewPasswordFields, SubmitButton } from "../components/Field.tsx";
import { Cookies, setCookie } from "../lib/cookies.ts";
import { preloadDashboard } from "../lib/lazyPage.tsx";
import { go } from "../lib/nav.ts";
import { DEFAULT_ICON } from "../routes.ts";
import { refreshAfterLogin } from "../session.ts";

export const REDIRECT_SECONDS = 3;

export function RegisterPage() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [errors, setErrors] = useState<FieldErrors<"email" | "password" | "confirm">>({});
  const [busy, setBusy] = useState(false);
  const [registered, setRegistered] = useState<string | null>(null);
  const [seconds, setSeconds] = useState(REDIRECT_SECONDS);

  useEffect(() => {
    if (registered !== null) preloadDashboard();
  }, [registered]);

  useEffect(() => {
    if (registered === null) return;
    if (seconds <= 0) {
      go("/", { replace: true });
      return;
    }
    const timer = setTimeout(() => setSeconds((s) => s - 1), 1000);
    return () => clearTimeout(timer);
  }, [registered, seconds]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    const form = { email: email.trim(), password, confirm };
    const invalid = validateRegisterForm(form);
    setErrors(invalid);
    if (Object.keys(invalid).length > 0) return;
    setBusy(true);
    const answer = await call("/api/user/signup", {
      email: form.email,
      password: transformPassword(form.password),
      icon_url: DEFAULT_ICON,
      host: location.host,
    });
    if (answer.code === Code.alreadyRegistered) {
      setBusy(false);
      setErrors({ email: Msg.alreadyRegistered });
      return;
    }
    if (answer.code !== Code.ok) {
      setBusy(false);
      setErrors({ password: answer.msg });
      return;
    }
    setCookie(Cookies.lastRegister, form.email, { days: COOKIE_DAYS.lastRegister });
    // The server has logged the new account in (session cookie set with the answer).
    await refreshAfterLogin();
    setBusy(false);
    setSeconds(REDIRECT_SECONDS);
    setRegistered(form.email);
  }

  if (registered !== null) {
    return (
      <AuthLayout>
        <div className="result result-ok" role="status">
          <div className="result-icon" aria-hidden="true">
            ✓
          </div>
          <h1 className="auth-title">注册成功</h1>
          <p className="result-text">欢迎加入飞渡，{registered}</p>
          <p className="result-countdown">{seconds}秒后自动跳转到首页</p>
          <button
            type="button"
            className="btn btn-primary btn-block"
            onClick={() => go("/", { replace: true })}
          >
            立即进入首页
          </button>
        </div>
      </AuthLayout>
    );
  }

  return (
    <AuthLayout>
      <h1 className="auth-title">注册</h1>
      <p className="auth-subtitle">注册账号，立即开始使用</p>
      <form className="form" onSubmit={submit} noValidate>
        <EmailField value={email} error={errors.email} onChange={(event) => setEmail(event.target.value)} />
        <NewPasswordFields
          labels={["密码", "确认密码"]}
          placeholders={["至少 8 位", "再次输入密码"]}
          password={password}
          confirm={confirm}
          errors={errors}
          onPassword={setPassword}
          onConfirm={setConfirm}
        />
        <SubmitButton busy={busy} busyText="注册中…">
          注册
        </SubmitButton>
      </form>
      <div className="auth-links">
        <span />
        <a href="#/login">已有账号？去登录</a>
      </div>
    </AuthLayout>
  );
}
