import { useEffect, useRef, useState } from "react";
import { getJson } from "../api.ts";
import { go } from "../lib/nav.ts";
import { hashPathAndQuery } from "../lib/query.ts";
import { refreshUserInfo } from "../session.ts";

export const CONFIRM_REDIRECT_MS = 3000;

type Status = { kind: "pending" } | { kind: "ok" } | { kind: "fail"; msg: string };

/** Opens a mailed confirmation link: `/#/confirm?serial_id&key&action`. */
export function ConfirmPage() {
  const [status, setStatus] = useState<Status>({ kind: "pending" });
  const started = useRef(false);
  const query = hashPathAndQuery().query;
  const changePassword = query.get("action") === "change_password";

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const { query: q } = hashPathAndQuery();
    const serialId = q.get("serial_id") ?? "";
    const key = q.get("key") ?? "";
    if (!serialId || !key) {
      setStatus({ kind: "fail", msg: "链接无效" });
      return;
    }
    const action = q.get("action") === "change_password" ? "change_password" : "signup_confirm";
    const params = new URLSearchParams({ serial_id: serialId, key });
    void getJson<{ Code: number; msg: string }>(`/api/account/${action}?${params}`).then((answer) => {
      if (answer?.Code === 0) {
        setStatus({ kind: "ok" });
        // A password change ends every session; learn who we are now.
        void refreshUserInfo({ quiet: true });
      } else {
        setStatus({ kind: "fail", msg: answer?.msg ?? "网络错误" });
      }
    });
  }, []);

  useEffect(() => {
    if (status.kind !== "ok") return;
    const timer = setTimeout(() => go("/", { replace: true }), CONFIRM_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [status.kind]);

  return (
    <div className="page page-narrow">
      <section className="card result-card">
        {status.kind === "pending" ? (
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
              <a className="btn btn-primary" href="#/login">
                直接登录
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
              <a className="btn" href="#/register">
                重新注册
              </a>
            </div>
          </div>
        )}
      </section>
    </div>
  );
}
