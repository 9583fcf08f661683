/**
 * One client guide (seed 000 §2): the route's catalog entry and text in five numbered steps. The
 * subscribe buttons are the dashboard's SubscribeMenu (same login and device rules); installers
 * and step images show only when the operator has put them in `<data>/guide/`. Loaded lazily by
 * App.tsx, so this module and the guide texts are a chunk of their own.
 */
import { type MouseEvent, type ReactNode, useEffect, useState } from "react";
import { useLocation } from "wouter";
import { type GuideFile, type GuideInfo, guideAt } from "../../src/modules/guide/catalog.ts";
import { Code } from "../../src/rpc/codes.ts";
import { subscriptionOrigin } from "../../src/subscription/clients.ts";
import { call } from "../api.ts";
import { isMobile } from "../components/platform.ts";
import { SubscribeMenu } from "../components/subscribe/SubscribeMenu.tsx";
import { TOAST_SHORT, toast } from "../components/Toast.tsx";
import { NotFoundPage } from "../pages/NotFound.tsx";
import { ROUTES } from "../routes.ts";
import { useSession } from "../session.ts";
import { type GuideContent, guideContent, STEP_TITLES } from "./content.ts";

export const GuideMsg = {
  loginToTry: "请您登录后再进行体验",
  phoneOnly: "请在手机上打开本页面，再导入分流规则",
} as const;

/** The catalog paths present on this server; empty until known (or when the call fails). */
function usePresentFiles(): Set<string> {
  const [present, setPresent] = useState<Set<string>>(() => new Set());
  useEffect(() => {
    let live = true;
    void call("/api/guide/files", {}).then((answer) => {
      if (live && answer.code === Code.ok && Array.isArray(answer.data)) setPresent(new Set(answer.data));
    });
    return () => {
      live = false;
    };
  }, []);
  return present;
}

/** The rule file's address on the site subscriptions are served from. */
function useRuleFileUrl(): string {
  const { user } = useSession();
  return `${subscriptionOrigin(user?.describe_host ?? "", location.origin)}/describe/ss_rule.conf`;
}

function Step({ index, children }: { index: number; children: ReactNode }) {
  const id = `guide-step-${index + 1}`;
  return (
    <section className="card guide-step" aria-labelledby={id}>
      <h2 id={id} className="guide-step-title">
        <span className="guide-step-number">{index + 1}</span> {STEP_TITLES[index]}
      </h2>
      {children}
    </section>
  );
}

function Paragraphs({ lines }: { lines: string[] }) {
  return (
    <>
      {lines.map((line) => (
        <p key={line} className="guide-text">
          {line}
        </p>
      ))}
    </>
  );
}

function StepImages({ files, step, present }: { files: GuideFile[]; step: number; present: Set<string> }) {
  const shown = files.filter((file) => file.kind === "image" && file.step === step && present.has(file.path));
  if (!shown.length) return null;
  return (
    <div className="guide-images">
      {shown.map((file) => (
        <img
          key={file.path}
          className="guide-image"
          src={`/guide/${file.path}`}
          alt={file.label}
          loading="lazy"
        />
      ))}
    </div>
  );
}

function Downloads({ guide, present }: { guide: GuideInfo; present: Set<string> }) {
  const installers = guide.files.filter((file) => file.kind === "installer" && present.has(file.path));
  if (installers.length) {
    return (
      <div className="guide-actions">
        {installers.map((file) => (
          <a key={file.path} className="btn btn-primary" href={`/guide/${file.path}`} download>
            下载 {file.label}
          </a>
        ))}
      </div>
    );
  }
  const store = guide.officialUrl.startsWith("https://apps.apple.com/");
  return (
    <div className="guide-actions">
      <a className="btn btn-primary" href={guide.officialUrl} target="_blank" rel="noopener noreferrer">
        {store ? "前往 App Store" : "前往官网下载"}
      </a>
    </div>
  );
}

/** Streisand's 导入分流规则: only for a logged-in visitor on a phone (seed 000 §2, §8). */
function RouteImport() {
  const { user } = useSession();
  const ruleUrl = useRuleFileUrl();
  const onClick = (event: MouseEvent) => {
    if (!user) {
      event.preventDefault();
      toast.error(GuideMsg.loginToTry, TOAST_SHORT);
    } else if (!isMobile()) {
      event.preventDefault();
      toast.error(GuideMsg.phoneOnly, TOAST_SHORT);
    }
  };
  return (
    <div className="guide-actions">
      <a
        className="btn"
        href={user ? `streisand://import/${ruleUrl}` : "#/streisand_for_ios"}
        onClick={onClick}
      >
        导入分流规则
      </a>
    </div>
  );
}

function RuleFile() {
  const ruleUrl = useRuleFileUrl();
  return (
    <p className="guide-text">
      需要分流规则时：在「配置」页点击右上角「+」，粘贴规则文件地址{" "}
      <code className="guide-code">{ruleUrl}</code> 并下载，再点击该配置选择「使用配置」。
    </p>
  );
}

function GuideSteps({
  guide,
  content,
  present,
}: {
  guide: GuideInfo;
  content: GuideContent;
  present: Set<string>;
}) {
  const client = content.subscribe;
  const withQr = guide.platform === "iOS";
  return (
    <ol className="guide-steps">
      <li>
        <Step index={0}>
          <p className="guide-text guide-requirement">{content.requirement}</p>
          {guide.version ? (
            <p className="guide-text">
              本教程使用的版本：{guide.client} {guide.version}
            </p>
          ) : null}
          <Paragraphs lines={content.install} />
          {guide.platform === "iOS" ? (
            <p className="guide-text guide-links">
              <a href="/#/apple_id_share">共享 Apple ID</a>
              <a href="/#/apple_id_signup_guide">注册非大陆 Apple ID 教程</a>
            </p>
          ) : null}
          <Downloads guide={guide} present={present} />
          <StepImages files={guide.files} step={1} present={present} />
        </Step>
      </li>
      <li>
        <Step index={1}>
          <Paragraphs lines={content.oneClick} />
          <div className="guide-actions">
            <SubscribeMenu client={client} withQr={withQr} trigger={<>订阅 {client.name} ▾</>} />
          </div>
          <StepImages files={guide.files} step={2} present={present} />
        </Step>
      </li>
      <li>
        <Step index={2}>
          <Paragraphs lines={content.manual} />
          <div className="guide-actions">
            <SubscribeMenu
              client={client}
              withQr={withQr}
              trigger={<>复制订阅链接 ▾</>}
              label={`复制订阅链接（${client.name}）`}
              triggerClassName="btn btn-small"
            />
          </div>
          <StepImages files={guide.files} step={3} present={present} />
        </Step>
      </li>
      <li>
        <Step index={3}>
          <Paragraphs lines={content.start} />
          <StepImages files={guide.files} step={4} present={present} />
        </Step>
      </li>
      <li>
        <Step index={4}>
          <Paragraphs lines={content.tips} />
          {content.ruleFile ? <RuleFile /> : null}
          {content.routeImport ? <RouteImport /> : null}
          <p className="guide-text">
            仍无法使用？请查看 <a href="/#/windows_errors">常见问题</a>，或到{" "}
            <a href="/#/feedback">问题反馈</a> 联系我们。
          </p>
        </Step>
      </li>
    </ol>
  );
}

export function GuidePage() {
  const [path] = useLocation();
  const present = usePresentFiles();
  const guide = guideAt(path);
  const content = guideContent(path);
  if (!guide || !content) return <NotFoundPage />;
  return (
    <div className="page guide-page">
      <h1 className="page-title">{ROUTES[path]?.title ?? `${guide.client} 使用教程`}</h1>
      <p className="page-subtitle">
        {guide.client}（{guide.platform}）：安装客户端，导入订阅，启动代理。
      </p>
      <GuideSteps guide={guide} content={content} present={present} />
    </div>
  );
}
