import { useEffect, useMemo, useRef, useState } from "react";
import { Link, useLocation } from "wouter";
import { isSafeHref } from "../../src/lib/links.ts";
import { NOTICE_POLL_MS } from "../../src/modules/notice/constants.ts";
import type { Notice } from "../../src/modules/notice/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { go } from "../lib/nav.ts";
import { activeTabPath, DEFAULT_ICON, type Tab, visibleTabs } from "../routes.ts";
import { isAgency, logout, useSession } from "../session.ts";
import { Dropdown } from "./Dropdown.tsx";
import { TrialVoucherButton } from "./TrialVoucher.tsx";

/** A swipe hint shows while the strip is more than this many pixels from that end. */
const HINT_THRESHOLD_PX = 20;

interface Hints {
  left: boolean;
  right: boolean;
}

/** Which ends of the strip hide tabs: a tab cut at either edge gets a hint there. */
function hintsOf(node: HTMLElement): Hints {
  return {
    left: node.scrollLeft > HINT_THRESHOLD_PX,
    right: node.scrollWidth - node.clientWidth - node.scrollLeft > HINT_THRESHOLD_PX,
  };
}

const sameHints = (a: Hints, b: Hints) => a.left === b.left && a.right === b.right;

/** `path` is the current route; `/tutorial` highlights the same tab as `/`. */
function TabStrip({ tabs, path }: { tabs: Tab[]; path: string }) {
  const active = activeTabPath(path);
  const strip = useRef<HTMLElement>(null);
  const [hints, setHints] = useState<Hints>({ left: false, right: false });

  // Mouse wheel scrolls the strip sideways; the hint follows the scroll position.
  useEffect(() => {
    const node = strip.current;
    if (!node) return;
    const update = () => {
      const next = hintsOf(node);
      setHints((current) => (sameHints(current, next) ? current : next));
    };
    const onWheel = (event: WheelEvent) => {
      if (node.scrollWidth <= node.clientWidth) return;
      const delta = Math.abs(event.deltaY) > Math.abs(event.deltaX) ? event.deltaY : event.deltaX;
      if (delta === 0) return;
      const before = node.scrollLeft;
      node.scrollLeft = before + delta;
      // At either end the wheel goes back to scrolling the page.
      if (node.scrollLeft !== before) event.preventDefault();
    };
    update();
    node.addEventListener("scroll", update, { passive: true });
    node.addEventListener("wheel", onWheel, { passive: false });
    const observer = new ResizeObserver(update);
    observer.observe(node);
    return () => {
      node.removeEventListener("scroll", update);
      node.removeEventListener("wheel", onWheel);
      observer.disconnect();
    };
  }, []);

  // The current tab is scrolled into view (centred when it can be).
  useEffect(() => {
    const node = strip.current;
    // Runs on every navigation (path), even between two routes of the same tab.
    if (!node || tabs.length === 0 || !path) return;
    const current = node.querySelector<HTMLElement>(`[data-path="${CSS.escape(active)}"]`);
    if (!current) return;
    const left = current.offsetLeft - (node.clientWidth - current.offsetWidth) / 2;
    node.scrollTo({ left: Math.max(0, left), behavior: "smooth" });
  }, [active, tabs, path]);

  return (
    <div className="tabs-wrap">
      <nav className="tabs" ref={strip} aria-label="主导航">
        {tabs.map((tab) => (
          <Link
            key={tab.path}
            href={tab.path}
            data-path={tab.path}
            className={`tab${tab.path === active ? " tab-active" : ""}`}
            aria-current={tab.path === active ? "page" : undefined}
          >
            {tab.label}
          </Link>
        ))}
      </nav>
      {hints.left ? (
        <button
          type="button"
          className="tabs-hint tabs-hint-left"
          aria-label="向左滑动查看更多"
          onClick={() =>
            strip.current?.scrollBy({ left: -strip.current.clientWidth * 0.6, behavior: "smooth" })
          }
        >
          ‹
        </button>
      ) : null}
      {hints.right ? (
        <button
          type="button"
          className="tabs-hint"
          aria-label="向右滑动查看更多"
          onClick={() =>
            strip.current?.scrollBy({ left: strip.current.clientWidth * 0.6, behavior: "smooth" })
          }
        >
          ›
        </button>
      ) : null}
    </div>
  );
}

function greeting(hour = new Date().getHours()): string {
  if (hour < 5) return "夜深了";
  if (hour < 11) return "早上好";
  if (hour < 13) return "中午好";
  if (hour < 18) return "下午好";
  return "晚上好";
}

/** Follows a notice's link: in-app routes, other relative or http(s) links; any other scheme never. */
function followHref(href: string) {
  if (!isSafeHref(href)) return;
  if (href.startsWith("#/")) go(href.slice(1));
  else if (href.startsWith("/#/")) go(href.slice(2));
  else location.assign(href);
}

function BellIcon() {
  return (
    <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
      <path
        fill="currentColor"
        d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2Z"
      />
    </svg>
  );
}

/** The user's icon, or the first letter of the e-mail while the icon is the default logo. */
function Avatar({ icon, email, large = false }: { icon: string; email: string; large?: boolean }) {
  const className = `avatar${large ? " avatar-large" : ""}`;
  if (icon && icon !== DEFAULT_ICON) {
    return <img className={className} src={icon} alt="" width={large ? 48 : 32} height={large ? 48 : 32} />;
  }
  return (
    <span className={`${className} avatar-letter`} aria-hidden="true">
      {(email[0] ?? "?").toUpperCase()}
    </span>
  );
}

export function Header() {
  const session = useSession();
  const [path] = useLocation();
  const [open, setOpen] = useState<"bell" | "user" | null>(null);
  const [notices, setNotices] = useState<Notice[]>([]);
  const user = session.user;
  const userId = user?._id;

  useEffect(() => {
    setNotices([]);
    if (!userId) return;
    let live = true;
    const load = () =>
      void call("/api/user_notive/list", {}, { quiet: true }).then((answer) => {
        if (live && answer.code === Code.ok && Array.isArray(answer.data)) setNotices(answer.data);
      });
    load();
    // A ticket answered while the page is open shows on the bell by the next poll, as the reply does.
    const timer = setInterval(load, NOTICE_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [userId]);

  // Navigating closes whatever is open.
  useEffect(() => {
    if (path) setOpen(null);
  }, [path]);

  const viewer = user?.type ?? "none";
  const agency = isAgency(session);
  const agencyOwner = user?.agencyOwner ?? false;
  const tabs = useMemo(
    () => (session.ready ? visibleTabs(viewer, agency, agencyOwner) : []),
    [session.ready, viewer, agency, agencyOwner],
  );

  function clickNotice(notice: Notice) {
    setOpen(null);
    setNotices((list) => list.filter((n) => n._id !== notice._id));
    void call("/api/user_notive/clicked", { noticeId: notice._id });
    followHref(notice.href);
  }

  return (
    <header className="site-header">
      <div className="header-inner">
        <Link href="/" className="brand" aria-label="飞渡 首页">
          <img src="/logo.svg" alt="" width={28} height={28} />
          <span>飞渡</span>
        </Link>
        <TabStrip tabs={tabs} path={path} />
        <div className="header-actions">
          {session.ready ? <TrialVoucherButton /> : null}
          {user && notices.length > 0 ? (
            <Dropdown
              open={open === "bell"}
              onOpenChange={(next) => setOpen((cur) => (next ? "bell" : cur === "bell" ? null : cur))}
              label={`通知（${notices.length} 条未读）`}
              triggerClassName="icon-button bell"
              trigger={
                <>
                  <BellIcon />
                  <span className="red-dot" aria-hidden="true" />
                </>
              }
            >
              <div className="menu-title">通知</div>
              <ul className="notice-list">
                {notices.map((notice) => (
                  <li key={notice._id}>
                    <button type="button" className="notice-item" onClick={() => clickNotice(notice)}>
                      {notice.desc}
                    </button>
                  </li>
                ))}
              </ul>
            </Dropdown>
          ) : null}
          {user ? (
            <Dropdown
              open={open === "user"}
              onOpenChange={(next) => setOpen((cur) => (next ? "user" : cur === "user" ? null : cur))}
              label="用户菜单"
              triggerClassName="avatar-button"
              trigger={<Avatar icon={user.icon} email={user.email} />}
            >
              <div className="user-menu">
                <Avatar icon={user.icon} email={user.email} large />
                <p className="user-greeting">{greeting()}！</p>
                <p className="user-email">{user.email}</p>
                <button
                  type="button"
                  className="btn btn-block"
                  onClick={() => {
                    setOpen(null);
                    void logout();
                  }}
                >
                  退出登录
                </button>
                <a className="user-forgot" href="#/reset">
                  忘记密码
                </a>
              </div>
            </Dropdown>
          ) : session.ready ? (
            <Link href="/login" className="btn btn-primary btn-small">
              登录
            </Link>
          ) : null}
        </div>
      </div>
    </header>
  );
}

export function Footer() {
  return (
    <footer className="site-footer">
      <span>© 2022 飞渡</span>
      <span aria-hidden="true">·</span>
      <a href="/about.html">飞渡面板软件</a>
    </footer>
  );
}
