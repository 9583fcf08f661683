/**
 * 共享 Apple ID /apple_id_share (seed 000 §2, §5, §6, §8): for paying customers only. The link is
 * never in the page: each click asks the server, which checks the login and paidUser as stored now
 * (the seed's "paidUser re-read before opening") and only then answers the link.
 */
import { useState } from "react";
import { APPLE_ID_SHARE_CALL, AppleIdMsg } from "../../src/modules/appleid/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { requireLogin } from "../components/requireLogin.ts";
import { TOAST_LONG, TOAST_MEDIUM, toast } from "../components/Toast.tsx";
import { useSession } from "../session.ts";

/** A new tab without a way back to this page; the same tab when the browser blocks the popup. */
function openOutside(url: string) {
  const opened = window.open(url, "_blank");
  if (opened) opened.opener = null;
  else location.assign(url);
}

/** Asks the server for the link and opens it, or says (for the seed's duration) why not. */
async function openShareLink() {
  if (!requireLogin({ message: AppleIdMsg.loginRequired })) return;
  const answer = await call(APPLE_ID_SHARE_CALL, {});
  if (answer.code === Code.ok) openOutside(answer.data.url);
  else if (answer.code === Code.forbidden) toast.error(AppleIdMsg.notPaid, TOAST_LONG);
  else if (answer.code === Code.notFound) toast.info(AppleIdMsg.notOpen, TOAST_MEDIUM);
  // The envelope client has already said 网络错误 (no answer) or 登录过期 (1002, then the login page).
  else if (answer.code !== Code.network && answer.code !== Code.notLoggedIn) {
    toast.error(AppleIdMsg.retryLater, TOAST_LONG);
  }
}

export function AppleIdSharePage() {
  const { host } = useSession();
  const [busy, setBusy] = useState(false);
  // Until the host info arrives the button stays usable: the server answers 暂未开放 itself.
  const closed = host?.appleIdShareOpen === false;

  async function onOpen() {
    setBusy(true);
    try {
      await openShareLink();
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="page help-page">
      <h1 className="page-title">共享 Apple ID</h1>
      <section className="card help-item" aria-labelledby="apple-share-what">
        <h2 id="apple-share-what" className="card-title">
          共享账号仅对付费用户开放
        </h2>
        <div className="help-body">
          <p>
            Shadowrocket、QuantumultX 等客户端不在中国大陆区 App Store 上架。付费用户可以使用本站共享的非大陆
            Apple ID 在 App Store 下载这些客户端；购买任意商品后即可使用。
          </p>
          <ul className="help-points">
            <li>只在 App Store 中登录共享账号，切勿在「设置」中登录 iCloud，否则设备可能被锁定。</li>
            <li>不要修改密码、不要开启双重认证；下载完成后请在 App Store 中退出登录。</li>
            <li>共享账号多人使用，如提示账号被锁，请稍后再来本页获取最新账号。</li>
          </ul>
        </div>
        <div className="help-actions">
          <button
            type="button"
            className="btn btn-primary"
            disabled={closed || busy}
            aria-busy={busy}
            onClick={() => void onOpen()}
          >
            {closed ? "共享账号暂未开放" : "获取共享 Apple ID"}
          </button>
        </div>
      </section>
      <section className="card help-item" aria-labelledby="apple-share-own">
        <h2 id="apple-share-own" className="card-title">
          推荐注册自己的 Apple ID
        </h2>
        <p className="help-body">
          自己的非大陆 Apple ID 不会被他人改密或锁定，更安全。按教程五步即可完成注册。
        </p>
        <div className="help-actions">
          <a className="btn" href="#/apple_id_signup_guide">
            查看注册教程
          </a>
        </div>
      </section>
    </div>
  );
}
