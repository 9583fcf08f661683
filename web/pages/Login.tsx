import { type FormEvent, useEffect, useRef, useState } from "react";
import { useSearch } from "wouter";
import { TotpMsg } from "../../src/modules/user/constants.ts";
import type { FieldErrors } from "../../src/modules/user/schema.ts";
import type { LoginChallenge } from "../../src/modules/user/two-factor-schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { type Answer, call } from "../api.ts";
import { AuthLayout } from "../components/AuthLayout.tsx";
import { EmailField, Field, SubmitButton } from "../components/Field.tsx";
import { TOAST_SHORT, toast } from "../components/Toast.tsx";
import { preloadDashboard } from "../lib/lazyPage.tsx";
import { ALREADY_JUMP_TO_REGISTER, getFlag, loginRecords, setFlag } from "../lib/localTable.ts";
import { go } from "../lib/nav.ts";
import { getPasskeyAssertion, passkeysSupported } from "../lib/passkey.ts";
import { queryParam } from "../lib/query.ts";
import { isAgency, refreshAfterLogin, useSession } from "../session.ts";

export const LOGIN_FAILED_TOAST = "登录失败";
/**
 * The form's rules (the shared zod schema) and the password digest are fetched when the visitor
 * starts typing, not with the page, so the first visit stays small (issue 18).
 */
const loadLoginRules = () =>
  Promise.all([import("../../src/modules/user/schema.ts"), import("../../src/modules/user/password.ts")]);

/** Codes whose own message says more than "wrong e-mail or password" (disabled, rate limited). */
const OWN_MESSAGE_CODES = new Set<number>([Code.forbidden, Code.tooManyRequests]);

/** Codes of the second step whose message goes under the code field. */
const CODE_STEP_CODES = new Set<number>([Code.badInput, Code.forbidden, Code.tooManyRequests]);

/**
 * The second step of a login with two-factor login on (issue 30): the code of the authenticator
 * app or a recovery code, for the challenge the password step answered (1040).
 */
function CodeStep({ login, onBack }: { login: LoginChallenge; onBack(expired?: string): void }) {
  const challenge = login.challenge;
  const [code, setCode] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    if (code.trim() === "") {
      setError(TotpMsg.codeEmpty);
      return;
    }
    setBusy(true);
    await finish(await call("/api/user/login_totp", { challenge, code: code.trim() }));
  }

  async function signWithPasskey() {
    if (busy) return;
    setBusy(true);
    const assertion = await getPasskeyAssertion(login);
    if (assertion) await finish(await call("/api/user/login_passkey", assertion));
    else {
      setBusy(false);
      setError(TotpMsg.passkeyFailed);
    }
  }

  async function finish(answer: Answer<unknown>) {
    if (answer.code !== Code.ok) {
      setBusy(false);
      if (answer.code === Code.network) return;
      if (answer.msg === TotpMsg.challengeExpired) onBack(answer.msg);
      else setError(CODE_STEP_CODES.has(answer.code) ? answer.msg : TotpMsg.wrongCode);
      toast.error(LOGIN_FAILED_TOAST, TOAST_SHORT);
      return;
    }
    loginRecords.add({ time: Date.now() });
    await refreshAfterLogin();
    setBusy(false);
  }

  return (
    <>
      <h1 className="auth-title">两步验证</h1>
      <p className="auth-subtitle">请输入验证器应用中的 6 位验证码；手机不在身边时可输入一个恢复码</p>
      <form className="form" onSubmit={submit} noValidate>
        <Field
          label="验证码"
          name="totp"
          inputMode="numeric"
          autoComplete="one-time-code"
          spellCheck={false}
          placeholder="6 位验证码或恢复码"
          ref={input}
          value={code}
          error={error}
          onChange={(event) => setCode(event.target.value)}
        />
        <SubmitButton busy={busy} busyText="验证中…">
          验证
        </SubmitButton>
        {login.passkeys.length > 0 && passkeysSupported() ? (
          <button
            type="button"
            className="btn btn-block"
            disabled={busy}
            onClick={() => void signWithPasskey()}
          >
            使用通行密钥
          </button>
        ) : null}
      </form>
      <div className="auth-links">
        <button type="button" className="btn btn-ghost btn-small" onClick={() => onBack()}>
          返回重新登录
        </button>
      </div>
    </>
  );
}

export function LoginPage() {
  const session = useSession();
  const [challenge, setChallenge] = useState<LoginChallenge | null>(null);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [errors, setErrors] = useState<FieldErrors<"email" | "password">>({});
  const [busy, setBusy] = useState(false);
  const passwordInput = useRef<HTMLInputElement>(null);
  const search = useSearch();

  useEffect(() => {
    if (!session.ready) return;
    if (session.user) {
      go("/", { replace: true });
      return;
    }
    // Seed 000 §2: an invited visitor (?c=) who never logged in here is sent to sign up, once.
    const invited = new URLSearchParams(search).get("c") ?? queryParam("c");
    if (invited && !getFlag(ALREADY_JUMP_TO_REGISTER) && loginRecords.count() === 0) {
      setFlag(ALREADY_JUMP_TO_REGISTER);
      go("/register", { replace: true });
    }
  }, [session.ready, session.user, search]);

  async function submit(event?: FormEvent) {
    event?.preventDefault();
    if (busy) return;
    const form = { email: email.trim(), password };
    const [{ Msg, validateLoginForm }, { transformPassword }] = await loadLoginRules();
    const invalid = validateLoginForm(form);
    setErrors(invalid);
    if (invalid.email || invalid.password) return;
    setBusy(true);
    const answer = await call("/api/user/login", {
      email: form.email,
      password: transformPassword(form.password),
    });
    if (answer.code === Code.totpCodeNeeded) {
      setBusy(false);
      setChallenge(answer.data as unknown as LoginChallenge);
      return;
    }
    if (answer.code !== Code.ok) {
      setBusy(false);
      if (answer.code === Code.network) return;
      setErrors({ password: OWN_MESSAGE_CODES.has(answer.code) ? answer.msg : Msg.loginFailed });
      toast.error(LOGIN_FAILED_TOAST, TOAST_SHORT);
      return;
    }
    loginRecords.add({ time: Date.now() });
    // The effect above goes home as soon as the user info arrives; going again here, after the
    // permissions, would bounce a tab clicked in between back to home.
    await refreshAfterLogin();
    setBusy(false);
  }

  if (challenge) {
    return (
      <AuthLayout>
        <CodeStep
          login={challenge}
          onBack={(expired) => {
            setChallenge(null);
            setErrors(expired ? { password: expired } : {});
          }}
        />
      </AuthLayout>
    );
  }

  return (
    <AuthLayout>
      <h1 className="auth-title">登录</h1>
      <p className="auth-subtitle">欢迎回来，登录后即可管理订阅</p>
      <form
        className="form"
        onSubmit={submit}
        onInput={() => {
          void loadLoginRules();
          preloadDashboard();
        }}
        noValidate
      >
        <EmailField
          value={email}
          error={errors.email}
          onChange={(event) => setEmail(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && !event.nativeEvent.isComposing) {
              event.preventDefault();
              passwordInput.current?.focus();
            }
          }}
        />
        <Field
          ref={passwordInput}
          label="密码"
          type="password"
          name="password"
          autoComplete="current-password"
          placeholder="请输入密码"
          value={password}
          error={errors.password}
          onChange={(event) => setPassword(event.target.value)}
        />
        <SubmitButton busy={busy} busyText="登录中…">
          登录
        </SubmitButton>
      </form>
      <div className="auth-links">
        <a href="#/reset">忘记密码？</a>
        {isAgency(session) ? null : <a href="#/register">没有账号？快速注册</a>}
      </div>
    </AuthLayout>
  );
}
