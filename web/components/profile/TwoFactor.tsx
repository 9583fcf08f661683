/**
 * 两步验证 (issue 30): turning two-factor login on (a QR code of the otpauth URL and the secret to
 * type, confirmed with a code, then the ten recovery codes shown once with a copy button) and off
 * (with a code, after confirming), and adding passkeys while it is on. On 我的账户 and on /two_factor, where mandatory mode keeps staff.
 */
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { TotpMsg } from "../../../src/modules/user/constants.ts";
import type { TotpSetup, TotpStatus } from "../../../src/modules/user/two-factor-schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { createPasskey, passkeysSupported } from "../../lib/passkey.ts";
import { useConfirm } from "../admin/ConfirmDialog.tsx";
import { copyToClipboard } from "../clipboard.ts";
import { Field } from "../Field.tsx";
import { QrCanvas } from "../QrDialog.tsx";
import { toast } from "../Toast.tsx";

export const TwoFactorMsg = {
  enabled: TotpMsg.alreadyOn,
  disabled: "两步验证已关闭",
  failed: "操作失败",
  codesCopied: "恢复码已复制",
  passkeyAdded: "通行密钥已添加",
} as const;

/** A one-time code typed by the user: the 6 digits of the app, or a recovery code. */
function CodeInput(props: {
  label: string;
  placeholder: string;
  value: string;
  error?: string;
  onChange(value: string): void;
}) {
  return (
    <Field
      label={props.label}
      name="totp"
      inputMode="numeric"
      autoComplete="one-time-code"
      spellCheck={false}
      placeholder={props.placeholder}
      value={props.value}
      error={props.error}
      onChange={(event) => props.onChange(event.target.value)}
    />
  );
}

/** A refusal the user can act on goes under the field; 502 and 1002 were already toasted by api.ts. */
function refusal(answer: { code: number; msg: string }, setError: (msg: string) => void) {
  if (answer.code === Code.network || answer.code === Code.notLoggedIn) return;
  if (answer.code === Code.badInput || answer.code === Code.tooManyRequests) setError(answer.msg);
  else toast.error(answer.msg ? `${TwoFactorMsg.failed}：${answer.msg}` : TwoFactorMsg.failed);
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone(): void }) {
  return (
    <div className="two-factor-step" role="status">
      <p className="two-factor-ok">{TwoFactorMsg.enabled}</p>
      <p className="card-note">
        请把下面 10 个恢复码保存在安全的地方：手机丢失时，每个恢复码可代替验证码登录一次。恢复码只显示这一次。
      </p>
      <ol className="two-factor-codes" aria-label="恢复码">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <div className="profile-actions">
        <button
          type="button"
          className="btn btn-small"
          onClick={() => void copyToClipboard(codes.join("\n"), { ok: TwoFactorMsg.codesCopied })}
        >
          复制恢复码
        </button>
        <button type="button" className="btn btn-primary btn-small" onClick={onDone}>
          我已保存
        </button>
      </div>
    </div>
  );
}

function Enrol({ onEnabled }: { onEnabled(codes: string[]): void }) {
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [code, setCode] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  async function start() {
    setBusy(true);
    const answer = await call("/api/user/totp_setup", {});
    setBusy(false);
    if (answer.code === Code.ok) setSetup(answer.data);
    else refusal(answer, (msg) => toast.error(msg));
  }

  async function confirm(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    setError("");
    setBusy(true);
    const answer = await call("/api/user/totp_enable", { code: code.trim() });
    setBusy(false);
    if (answer.code === Code.ok) {
      toast.success(TwoFactorMsg.enabled);
      onEnabled(answer.data.recoveryCodes);
    } else refusal(answer, setError);
  }

  if (!setup) {
    return (
      <div className="profile-actions">
        <button
          type="button"
          className="btn btn-primary btn-small"
          disabled={busy}
          onClick={() => void start()}
        >
          开启两步验证
        </button>
      </div>
    );
  }
  return (
    <form className="two-factor-step" onSubmit={confirm} noValidate>
      <p className="card-note">
        1. 在手机上打开验证器应用（Google Authenticator、Microsoft Authenticator、1Password 等），扫描二维码：
      </p>
      <QrCanvas value={setup.otpauthUrl} label="两步验证二维码" />
      <p className="card-note">无法扫码时，在应用中手动输入密钥（基于时间）：</p>
      <div className="profile-bind-command">
        <code className="two-factor-secret">{setup.secret}</code>
      </div>
      <p className="card-note">2. 输入应用中显示的 6 位验证码，确认开启：</p>
      <CodeInput label="验证码" placeholder="6 位数字" value={code} error={error} onChange={setCode} />
      <div className="profile-actions">
        <button type="submit" className="btn btn-primary btn-small" disabled={busy}>
          {busy ? "确认中…" : "确认开启"}
        </button>
      </div>
    </form>
  );
}

/** 通行密钥: how many, and adding one (this browser's or a security key) as another second factor. */
function Passkeys({ count, onAdded }: { count: number; onAdded(): void }) {
  const [busy, setBusy] = useState(false);

  async function add() {
    setBusy(true);
    const options = await call("/api/user/passkey_options", {});
    const created = options.code === Code.ok ? await createPasskey(options.data) : null;
    const answer = created ? await call("/api/user/passkey_add", created) : null;
    setBusy(false);
    if (options.code !== Code.ok) refusal(options, (msg) => toast.error(msg));
    else if (!answer) toast.error(TotpMsg.passkeyFailed);
    else if (answer.code === Code.ok) {
      toast.success(TwoFactorMsg.passkeyAdded);
      onAdded();
    } else refusal(answer, (msg) => toast.error(msg));
  }

  return (
    <div className="two-factor-passkeys">
      <span className="card-note">通行密钥 {count} 个：登录时可用指纹、面容或安全密钥代替验证码。</span>
      {passkeysSupported() ? (
        <button type="button" className="btn btn-small" disabled={busy} onClick={() => void add()}>
          添加通行密钥
        </button>
      ) : null}
    </div>
  );
}

function TurnOff({ status, onDisabled }: { status: TotpStatus; onDisabled(): void }) {
  const [code, setCode] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [confirm, dialog] = useConfirm();

  async function turnOff(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    setError("");
    const yes = await confirm({
      title: "关闭两步验证",
      message: "关闭后登录只需密码，账户安全性会降低。确定关闭吗？",
      confirmText: "关闭两步验证",
    });
    if (!yes) return;
    setBusy(true);
    const answer = await call("/api/user/totp_disable", { code: code.trim() });
    setBusy(false);
    if (answer.code === Code.ok) {
      toast.success(TwoFactorMsg.disabled);
      onDisabled();
    } else refusal(answer, setError);
  }

  return (
    <form className="two-factor-step" onSubmit={turnOff} noValidate>
      <p className="two-factor-on">
        <span className="badge profile-bound">已开启</span>
        <span className="card-note">剩余恢复码 {status.recoveryCodesLeft} 个</span>
      </p>
      {status.required ? (
        <p className="card-note">本站要求管理员和运营开启两步验证；关闭后需重新开启才能继续操作。</p>
      ) : null}
      <CodeInput
        label="验证码或恢复码"
        placeholder="6 位验证码或恢复码"
        value={code}
        error={error}
        onChange={setCode}
      />
      <div className="profile-actions">
        <button type="submit" className="btn btn-small admin-danger-text" disabled={busy}>
          关闭两步验证
        </button>
      </div>
      {dialog}
    </form>
  );
}

/** The 两步验证 card; `onChange` runs after it was turned on (codes acknowledged) or off. */
export function TwoFactorSection({ onChange }: { onChange?: () => void }) {
  const [status, setStatus] = useState<TotpStatus | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const load = useCallback(async () => {
    const answer = await call("/api/user/totp_status", {});
    if (answer.code === Code.ok) setStatus(answer.data);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  async function settled() {
    await load();
    onChange?.();
  }

  return (
    <section className="card profile-card" aria-labelledby="profile-two-factor">
      <h2 id="profile-two-factor" className="card-title">
        两步验证
      </h2>
      <p className="card-note">
        开启后，登录时除了密码还需输入手机验证器应用中的 6 位验证码，密码泄露也无法登录您的账户。
      </p>
      {codes ? (
        <RecoveryCodes
          codes={codes}
          onDone={() => {
            setCodes(null);
            void settled();
          }}
        />
      ) : status === null ? null : status.enabled ? (
        <>
          <TurnOff status={status} onDisabled={() => void settled()} />
          <Passkeys count={status.passkeys} onAdded={() => void load()} />
        </>
      ) : (
        <Enrol onEnabled={setCodes} />
      )}
    </section>
  );
}
