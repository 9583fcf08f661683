/**
 * 订阅导入（进阶） (seed 000 §2): a button per client app, each opening the same subscribe dropdown,
 * and a sing-box QR code for phones (请登录 for visitors). 全部节点链接（SSR） is a link unless the
 * customer has no line SSR can use, when the card says so instead (issue 26 D16).
 */
import { useEffect, useState } from "react";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { useSession } from "../../session.ts";
import { QrCanvas } from "../QrDialog.tsx";
import { ADVANCED_CLIENTS, SINGBOX_CLIENT, type SubscribeClient, userSubscriptionUrl } from "./clients.ts";
import { SubscribeMenu } from "./SubscribeMenu.tsx";

/** The SSR share links of every line, one a line (seed 000 §2). */
export const LISTING_URL = "/user/getUserAllURL?type=ssr";

/** How many lines the SSR listing holds for the logged-in customer; null for visitors or while unknown. */
function useSsrLines(): number | null {
  const userId = useSession().user?._id;
  const [lines, setLines] = useState<number | null>(null);
  useEffect(() => {
    setLines(null);
    if (!userId) return;
    let current = true;
    void call("/api/user/ssr_lines", {}, { quiet: true }).then((answer) => {
      if (current && answer.code === Code.ok) setLines(answer.data.lines);
    });
    return () => {
      current = false;
    };
  }, [userId]);
  return lines;
}

function ListingNote() {
  const lines = useSsrLines();
  if (lines === 0) {
    return <p className="card-note">以下为各客户端的专用订阅。全部节点链接（SSR）：暂无支持 SSR 的线路。</p>;
  }
  return (
    <p className="card-note">
      以下为各客户端的专用订阅。也可查看 <a href={LISTING_URL}>全部节点链接（SSR）</a>
      ，逐条导入。
    </p>
  );
}

function ClientButton({ client }: { client: SubscribeClient }) {
  const badges = [
    client.recommended ? { text: "推荐", className: "badge" } : null,
    client.noDirect ? { text: "不支持直连", className: "badge badge-muted" } : null,
  ].filter((badge) => badge !== null);
  return (
    <SubscribeMenu
      client={client}
      withQr={client.qr === true}
      triggerClassName="btn advanced-client"
      label={["订阅", client.name, ...badges.map((badge) => badge.text)].join(" ")}
      trigger={
        <>
          <span>{client.name}</span>
          {badges.map((badge) => (
            <span key={badge.text} className={badge.className}>
              {badge.text}
            </span>
          ))}
        </>
      }
    />
  );
}

function SingboxQr() {
  const { user } = useSession();
  const url = user ? userSubscriptionUrl(SINGBOX_CLIENT.key, user) : "";
  return (
    <div className="singbox-box">
      <ClientButton client={SINGBOX_CLIENT} />
      {url ? (
        <>
          <QrCanvas value={url} label="sing-box 订阅二维码" />
          <a className="singbox-link" href={url}>
            {url}
          </a>
          <p className="card-note">用手机 sing-box 扫描二维码，或点击上方按钮导入。</p>
        </>
      ) : (
        <p className="singbox-login">请登录</p>
      )}
    </div>
  );
}

export function AdvancedImport() {
  return (
    <section className="card advanced-import" aria-labelledby="advanced-import-title">
      <div className="card-head">
        <h2 id="advanced-import-title" className="card-title">
          订阅导入（进阶）
        </h2>
        <a href="/#/windows_errors">使用异常？</a>
      </div>
      <ListingNote />
      <div className="advanced-clients">
        {ADVANCED_CLIENTS.map((client) => (
          <ClientButton key={client.name} client={client} />
        ))}
      </div>
      <SingboxQr />
    </section>
  );
}
