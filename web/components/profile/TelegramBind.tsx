/**
 * The messaging-service bind section of the profile (seed 000 §2, issue 13 §5): the bind command
 * to send the Telegram bot, or 已绑定 with the bound chat and since when, and 解除绑定. Rendered
 * only for non-agency accounts and only while the bot is on (BindInfo.enabled).
 */
import { useCallback, useEffect, useState } from "react";
import { type BindInfo, BindMsg } from "../../../src/modules/telegram/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { useConfirm } from "../admin/ConfirmDialog.tsx";
import { copyToClipboard } from "../clipboard.ts";
import { formatDate, formatDateTime } from "../format.ts";
import { toast } from "../Toast.tsx";

/** Seed 000 §8 Profile: the profile's copy says 剪切板. */
export const BIND_COPY_OK = "已复制到剪切板";

/** The bind info; each load makes a fresh code, so it is loaded on entry and on demand only. */
function useBindInfo(): [BindInfo | null, () => Promise<void>] {
  const [info, setInfo] = useState<BindInfo | null>(null);
  const load = useCallback(async () => {
    const answer = await call("/api/user/bind_info", {});
    setInfo(answer.code === Code.ok ? answer.data : null);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  return [info, load];
}

/** True once `time` (ms) has passed; re-renders at that moment. */
function usePassed(time: number): boolean {
  const [passed, setPassed] = useState(() => time > 0 && Date.now() >= time);
  useEffect(() => {
    setPassed(time > 0 && Date.now() >= time);
    if (time <= 0) return;
    const wait = time - Date.now();
    if (wait <= 0) return;
    const timer = setTimeout(() => setPassed(true), wait);
    return () => clearTimeout(timer);
  }, [time]);
  return passed;
}

function BindCommand({ info, reload }: { info: BindInfo; reload: () => Promise<void> }) {
  const expired = usePassed(info.expireTime);
  const botLink = info.link || (info.botUsername ? `https://t.me/${info.botUsername}` : "");
  return (
    <div className="profile-bind">
      <p className="card-note">
        绑定后可在 Telegram 中查询剩余流量、获取订阅链接，并接收订单、工单回复和流量提醒。在与
        {info.botUsername ? ` @${info.botUsername} ` : "本站机器人"}
        的私聊中发送下面的命令即可绑定：
      </p>
      <div className="profile-bind-command">
        <code>{info.command}</code>
        <button
          type="button"
          className="btn btn-small"
          disabled={expired}
          onClick={() => void copyToClipboard(info.command, { ok: BIND_COPY_OK })}
        >
          复制
        </button>
      </div>
      <p className={`card-note${expired ? " profile-expired" : ""}`}>
        {expired
          ? "绑定命令已过期，请获取新的绑定命令。"
          : `绑定命令有效期至 ${formatDateTime(info.expireTime)}，仅限本人使用，请勿发给他人。`}
      </p>
      <div className="profile-actions">
        {botLink ? (
          <a className="btn btn-primary btn-small" href={botLink} target="_blank" rel="noopener noreferrer">
            打开 Telegram 机器人
          </a>
        ) : null}
        <button type="button" className="btn btn-small" onClick={() => void reload()}>
          {expired ? "获取新的绑定命令" : "刷新绑定状态"}
        </button>
      </div>
    </div>
  );
}

function Bound({ info, reload }: { info: BindInfo; reload: () => Promise<void> }) {
  const [confirm, dialog] = useConfirm();
  const [busy, setBusy] = useState(false);

  async function unbind() {
    const yes = await confirm({
      title: BindMsg.confirmUnbind,
      message: BindMsg.unbindWarning,
      confirmText: "解除绑定",
    });
    if (!yes) return;
    setBusy(true);
    const answer = await call("/api/user/unbind", {});
    setBusy(false);
    if (answer.code === Code.ok) {
      toast.success(BindMsg.unbound);
      await reload();
    } else if (answer.code !== Code.notLoggedIn) {
      toast.error(BindMsg.unbindFailed);
    }
  }

  return (
    <div className="profile-bind profile-bind-bound">
      <span className="badge profile-bound">已绑定</span>
      <span className="profile-bound-chat">
        {info.chatName}（{formatDate(info.bindTime)} 起）
      </span>
      <span className="card-note">可在 Telegram 中向机器人发送 /help 查看可用命令。</span>
      <button
        type="button"
        className="btn btn-small admin-danger-text"
        disabled={busy}
        onClick={() => void unbind()}
      >
        解除绑定
      </button>
      {dialog}
    </div>
  );
}

export function TelegramBind() {
  const [info, reload] = useBindInfo();
  if (!info?.enabled) return null;
  return (
    <section className="card profile-card" aria-labelledby="profile-telegram">
      <h2 id="profile-telegram" className="card-title">
        Telegram 绑定
      </h2>
      {info.bound ? <Bound info={info} reload={reload} /> : <BindCommand info={info} reload={reload} />}
    </section>
  );
}
