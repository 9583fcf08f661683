import { formatGB } from "../../src/lib/traffic.ts";
import type { UserInfo } from "../../src/modules/user/schema.ts";
import { formatDateTime } from "../components/format.ts";
import { LoginPrompt } from "../components/LoginPrompt.tsx";
import { LuckyDrawEntry } from "../components/LuckyDrawEntry.tsx";
import { PromoCard } from "../components/PromoCard.tsx";
import { SignUseCard } from "../components/SignUseCard.tsx";
import { AdvancedImport } from "../components/subscribe/AdvancedImport.tsx";
import { ClientPicker } from "../components/subscribe/ClientPicker.tsx";
import { TrialTrafficNote } from "../components/TrialTrafficNote.tsx";
import { timePackage } from "../lib/timePackage.ts";
import { isAgency, useSession } from "../session.ts";

function TimePackageCard({ user }: { user: UserInfo }) {
  const pkg = timePackage(user);
  if (!pkg.active) return null;
  return (
    <section className="card stat-card" aria-labelledby="card-time">
      <div className="card-head">
        <h2 id="card-time" className="card-title">
          时间套餐
        </h2>
        <span className="badge">剩余 {pkg.daysLeft} 天</span>
      </div>
      <p className="stat-main">
        <span className="stat-value">{formatGB(pkg.left)}</span>
        <span className="stat-unit"> GB</span>
      </p>
      <p className="stat-label">
        今日剩余额度 · 已用 {formatGB(pkg.used)} / {formatGB(pkg.limit)} GB
      </p>
      <div
        className="progress"
        role="progressbar"
        aria-label="今日用量"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(pkg.percent)}
      >
        <div className="progress-bar" style={{ width: `${pkg.percent}%` }} />
      </div>
      <p className="card-note">
        已用 {pkg.percent.toFixed(0)}% · 到期时间 {formatDateTime(user.vipExpireTime)}
      </p>
    </section>
  );
}

function TrafficCard({ user, agency }: { user: UserInfo; agency: boolean }) {
  return (
    <section className="card stat-card" aria-labelledby="card-traffic">
      <div className="card-head">
        <h2 id="card-traffic" className="card-title">
          不限时流量
        </h2>
        <span className="badge badge-muted">永不过期</span>
      </div>
      <p className="stat-main">
        <span className="stat-value">{formatGB(user.traffic)}</span>
        <span className="stat-unit"> GB</span>
      </p>
      <p className="stat-label">剩余流量</p>
      <p className="card-note">累计已用 {formatGB(user.spendTraffic)} GB</p>
      <TrialTrafficNote user={user} />
      {agency ? null : (
        <a className="btn btn-primary card-action" href="/#/shop">
          充值流量
        </a>
      )}
    </section>
  );
}

export function HomePage() {
  const session = useSession();
  if (!session.ready) {
    return (
      <div className="page">
        <div className="spinner page-spinner" role="status" aria-label="加载中" />
      </div>
    );
  }
  const user = session.user;
  const agency = isAgency(session);
  return (
    <div className="page">
      <h1 className="page-title">使用教程</h1>
      {user ? <p className="page-subtitle">欢迎回来，{user.email}</p> : null}
      {user ? (
        <div className="card-grid home-cards">
          <TimePackageCard user={user} />
          <TrafficCard user={user} agency={agency} />
          <SignUseCard user={user} />
        </div>
      ) : (
        <div className="card-grid home-cards">
          <LoginPrompt
            title="登录后开始使用"
            note="登录后可查看剩余流量、套餐与订阅链接，并按教程导入客户端。"
          >
            <a className="btn" href="#/register">
              注册账号
            </a>
          </LoginPrompt>
          <SignUseCard user={null} />
        </div>
      )}
      {agency ? null : <PromoCard />}
      {user && !agency ? <LuckyDrawEntry /> : null}
      <ClientPicker agency={agency} />
      <AdvancedImport />
    </div>
  );
}
