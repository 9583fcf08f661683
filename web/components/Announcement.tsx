import { useEffect, useRef, useState } from "react";
import { isSafeHref } from "../../src/lib/links.ts";
import type { HostInfo } from "../../src/modules/settings/schema.ts";
import { Cookies, getCookie, setCookie } from "../lib/cookies.ts";
import { useSession } from "../session.ts";
import { Dialog } from "./Dialog.tsx";

/** "example.com", "https://example.com/" → "example.com". */
export function hostOf(domain: string): string {
  return domain
    .trim()
    .replace(/^[a-z]+:\/\//i, "")
    .replace(/\/.*$/, "")
    .toLowerCase();
}

function siteUrl(domain: string): string {
  return /^https?:\/\//i.test(domain) ? domain : `https://${hostOf(domain)}`;
}

function AnnouncementBody({ host }: { host: HostInfo }) {
  const { notice, preferDomain, contact_info, group_link } = host;
  const domain = preferDomain ? hostOf(preferDomain) : location.host;
  return (
    <div className="announcement">
      {notice.notice_title ? (
        <h3 className={`notice-title${notice.notice_mark_red ? " notice-red" : ""}`}>
          {notice.notice_mark_red ? <span className="notice-mark">重要</span> : null}
          {notice.notice_title}
        </h3>
      ) : null}
      {notice.notice_content ? <p className="notice-content">{notice.notice_content}</p> : null}
      <p>欢迎使用飞渡，祝您使用愉快！</p>
      <p>
        请牢记本站推荐访问域名 <strong>{domain}</strong>，收藏备用，防止走失。
      </p>
      {contact_info ? <p className="notice-content">联系方式：{contact_info}</p> : null}
      {isSafeHref(group_link) ? (
        <p>
          交流群：
          <a href={group_link} target="_blank" rel="noreferrer noopener">
            点击加入
          </a>
        </p>
      ) : null}
      <p>
        遇到问题请<a href="#/feedback">提交工单</a>，工单一个工作日内回复。
      </p>
    </div>
  );
}

/**
 * The 最新公告 modal (seed 000 §2): shown when notice_show is on, at most once per
 * notice_day_interval days (dismiss cookie). When not suppressed, a differing preferred domain is
 * pointed out in a second dialog.
 */
export function Announcement() {
  const { host } = useSession();
  const decided = useRef(false);
  const [noticeOpen, setNoticeOpen] = useState(false);
  const [domainOpen, setDomainOpen] = useState(false);
  const [domainPending, setDomainPending] = useState(false);

  useEffect(() => {
    if (!host || decided.current) return;
    decided.current = true;
    if (getCookie(Cookies.noticeDismissed)) return;
    const preferred = host.preferDomain ? hostOf(host.preferDomain) : "";
    const wrongDomain = preferred !== "" && preferred !== location.host.toLowerCase();
    if (!host.notice.notice_show && !wrongDomain) return;
    setCookie(Cookies.noticeDismissed, "1", { days: host.notice.notice_day_interval || 1 });
    if (host.notice.notice_show) {
      setNoticeOpen(true);
      setDomainPending(wrongDomain);
    } else {
      setDomainOpen(true);
    }
  }, [host]);

  if (!host) return null;
  const closeNotice = () => {
    setNoticeOpen(false);
    if (domainPending) {
      setDomainPending(false);
      setDomainOpen(true);
    }
  };
  const preferred = hostOf(host.preferDomain);
  return (
    <>
      <Dialog
        open={noticeOpen}
        onClose={closeNotice}
        title="最新公告"
        footer={
          <button type="button" className="btn btn-primary" onClick={closeNotice}>
            我知道了
          </button>
        }
      >
        <AnnouncementBody host={host} />
      </Dialog>
      <Dialog
        open={domainOpen}
        onClose={() => setDomainOpen(false)}
        title="推荐访问域名"
        size="sm"
        footer={
          <>
            <button type="button" className="btn" onClick={() => setDomainOpen(false)}>
              知道了
            </button>
            <a className="btn btn-primary" href={siteUrl(host.preferDomain)}>
              前往
            </a>
          </>
        }
      >
        <p>
          您当前访问的是 <strong>{location.host}</strong>，推荐使用本站域名 <strong>{preferred}</strong>{" "}
          访问，速度更快更稳定。
        </p>
      </Dialog>
    </>
  );
}
