/**
 * The dashboard's client picker (seed 000 §2): four platform tabs, the chosen one kept in the
 * `platform` cookie (default: the detected platform), and each client with its subscribe dropdown
 * and install guide. Choosing a tab scrolls to the list.
 */
import { useRef, useState } from "react";
import { Cookies, getCookie, setCookie } from "../../lib/cookies.ts";
import { detectPlatform, PLATFORMS, type Platform } from "../platform.ts";
import { PLATFORM_CLIENTS, type SubscribeClient } from "./clients.ts";
import { chosenPlatform, dashboardQr } from "./rules.ts";
import { SubscribeMenu } from "./SubscribeMenu.tsx";

function ClientRow({ client, platform }: { client: SubscribeClient; platform: Platform }) {
  return (
    <li className="client-row">
      <span className="client-name">{client.name}</span>
      <div className="client-actions">
        <SubscribeMenu client={client} withQr={dashboardQr(platform)} />
        {client.guide ? (
          <a className="btn btn-small" href={client.guide}>
            安装教程
          </a>
        ) : (
          <span className="client-generic">通用订阅链接</span>
        )}
      </div>
    </li>
  );
}

function PlatformLinks({ platform, agency }: { platform: Platform; agency: boolean }) {
  return (
    <p className="client-links">
      {platform === "iOS" ? (
        <>
          <a href="/#/apple_id_share">共享 Apple ID</a>
          <a href="/#/apple_id_signup_guide">注册非大陆 Apple ID</a>
        </>
      ) : null}
      <a href="/#/windows_errors">常见问题</a>
      {agency ? null : <a href="/#/shop">购买流量</a>}
    </p>
  );
}

export function ClientPicker({ agency }: { agency: boolean }) {
  const [platform, setPlatform] = useState<Platform>(() =>
    chosenPlatform(getCookie(Cookies.platform), detectPlatform()),
  );
  const list = useRef<HTMLDivElement>(null);

  function choose(next: Platform) {
    setPlatform(next);
    setCookie(Cookies.platform, next);
    list.current?.scrollIntoView({ behavior: "smooth", block: "start" });
  }

  return (
    <section className="card client-picker" aria-labelledby="client-picker-title">
      <div className="card-head">
        <h2 id="client-picker-title" className="card-title">
          选择平台与客户端
        </h2>
      </div>
      <p className="card-note">
        选择您的设备，安装对应客户端后点击「订阅」一键导入，或复制订阅链接手动添加。
      </p>
      <div className="platform-tabs" role="tablist" aria-label="平台">
        {PLATFORMS.map((item) => (
          <button
            key={item}
            type="button"
            role="tab"
            id={`platform-tab-${item}`}
            aria-selected={item === platform}
            aria-controls="platform-clients"
            className={`platform-tab${item === platform ? " platform-tab-active" : ""}`}
            onClick={() => choose(item)}
          >
            {item}
          </button>
        ))}
      </div>
      <div
        ref={list}
        id="platform-clients"
        role="tabpanel"
        aria-labelledby={`platform-tab-${platform}`}
        className="client-panel"
      >
        <ul className="client-list">
          {PLATFORM_CLIENTS[platform].map((client) => (
            <ClientRow key={client.name} client={client} platform={platform} />
          ))}
        </ul>
        <PlatformLinks platform={platform} agency={agency} />
      </div>
    </section>
  );
}
