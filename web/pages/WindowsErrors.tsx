/**
 * 常见问题 /windows_errors (seed 000 §2 Troubleshooting): the eight problems with their fixes.
 * Where a fix is a profile toggle the button goes to /user_info; where it is a new link, the
 * reset of the subscribe menu (a visitor is asked to log in first); suggestions go to /feedback.
 */
import type { ReactNode } from "react";
import { TEST_URL } from "../../src/subscription/test-url.ts";
import { useResetSubscription } from "../components/subscribe/reset.tsx";
import { useSession } from "../session.ts";

/** Surge checks connectivity against Apple's captive-portal page (plain http, like TEST_URL). */
export const SURGE_TEST_URL = "http://www.apple.com/library/test/success.html";
export const RULE_FILE_PATH = "/describe/ss_rule.conf";

/** The seed's feedback promise (§2 Troubleshooting): one working day, at least 20 G. */
export const FEEDBACK_PROMISE = "问题反馈一般在一个工作日内回复；提出合理建议的用户，至少奖励 20G 永久流量。";

function ProfileButton({ toggle }: { toggle: string }) {
  return (
    <a className="btn btn-primary btn-small" href="#/user_info">
      去开启「{toggle}」
    </a>
  );
}

function FeedbackButton() {
  return (
    <a className="btn btn-primary btn-small" href="#/feedback">
      去问题反馈
    </a>
  );
}

/** 重置订阅链接 for a logged-in customer (with its confirmation); a login link for a visitor. */
function ResetButton() {
  const { user } = useSession();
  const [reset, dialog] = useResetSubscription();
  if (!user) {
    return (
      <a className="btn btn-small" href="#/login">
        登录后重置订阅链接
      </a>
    );
  }
  return (
    <>
      <button type="button" className="btn btn-small" onClick={() => void reset()}>
        重置订阅链接
      </button>
      {dialog}
    </>
  );
}

interface Problem {
  id: string;
  title: string;
  body: ReactNode;
  actions?: ReactNode;
}

const Url = ({ children }: { children: string }) => <code className="help-code">{children}</code>;

const PROBLEMS: Problem[] = [
  {
    id: "timeout",
    title: "所有节点都显示超时",
    body: (
      <>
        <p>节点信息会随线路调整而变化，客户端里保存的还是旧的节点。请在客户端中更新订阅，然后重新测速。</p>
        <p className="card-note">
          若更新后仍然全部超时，可以重置订阅链接后重新订阅（重置后所有设备都需要重新订阅）。
        </p>
      </>
    ),
    actions: <ResetButton />,
  },
  {
    id: "test-url",
    title: "修改测速地址",
    body: (
      <>
        <p>客户端默认的测速地址可能无法访问，节点可用却显示超时。请把测速地址改为通用的 204 测速地址：</p>
        <p>
          <Url>{TEST_URL}</Url>
        </p>
        <p>Surge 请使用 Apple 的测试页面：</p>
        <p>
          <Url>{SURGE_TEST_URL}</Url>
        </p>
        <p className="card-note">
          请不要使用 https 开头的测速地址：多一次加密握手，延迟偏高，还容易显示超时。
        </p>
      </>
    ),
  },
  {
    id: "dns",
    title: "所在网络限制 DNS",
    body: (
      <p>
        部分网络会限制或污染
        DNS，导致连上节点也打不开网站。请在「我的账户」中打开「释放DNS控制」并保存，然后在客户端中更新订阅。
      </p>
    ),
    actions: <ProfileButton toggle="释放DNS控制" />,
  },
  {
    id: "v2rayn",
    title: "Windows 上的 V2rayN 无法使用",
    body: (
      <p>
        旧版 V2rayN 无法识别订阅中的部分节点。请使用 <strong>7.0.0 或更新版本</strong>的
        V2rayN，更新后重新导入订阅。
      </p>
    ),
    actions: (
      <a className="btn btn-small" href="#/v2rayng_for_windows">
        查看 V2rayN 教程
      </a>
    ),
  },
  {
    id: "abroad",
    title: "人在国外，无法访问国内网站或速度慢",
    body: (
      <p>
        人在中国大陆以外时，请在「我的账户」中打开「国外订阅」并保存，然后在客户端中更新订阅，国内网站也会经由节点访问。
      </p>
    ),
    actions: <ProfileButton toggle="国外订阅" />,
  },
  {
    id: "surge",
    title: "Surge 所有节点超时",
    body: (
      <>
        <p>
          请先在 Surge 中更新配置（托管配置会按时自动更新，也可以手动更新），再把测速地址改为上面的 Apple
          测试页面后重新测速。
        </p>
        <p className="card-note">仍然全部超时时，请重置订阅链接并重新一键导入 Surge。</p>
      </>
    ),
    actions: <ResetButton />,
  },
  {
    id: "sstap",
    title: "SSTAP 经常断线",
    body: (
      <p>
        SSTAP
        已停止维护，断线问题无法修复，建议换用本站教程中的其他客户端。若您有好用的客户端推荐，欢迎通过问题反馈告诉我们，合理建议至少奖励{" "}
        <strong>20G 永久流量</strong>。
      </p>
    ),
    actions: <FeedbackButton />,
  },
  {
    id: "shadowrocket",
    title: "iOS 小火箭（Shadowrocket）打不开网站",
    body: (
      <>
        <p>
          多数是配置被改动过。请在 Shadowrocket 的「配置」页恢复默认配置，并选用 <strong>default.conf</strong>
          ，然后更新订阅。
        </p>
        <p className="card-note">
          本站也提供 Shadowrocket 分流规则文件：
          <a href={RULE_FILE_PATH} target="_blank" rel="noreferrer">
            {RULE_FILE_PATH}
          </a>
        </p>
      </>
    ),
  },
];

export function WindowsErrorsPage() {
  return (
    <div className="page help-page">
      <h1 className="page-title">常见问题</h1>
      <p className="help-lead">以下是最常见的八个问题和解决办法，按步骤操作后仍无法使用，请提交问题反馈。</p>
      <ol className="help-list">
        {PROBLEMS.map((problem, index) => (
          <li key={problem.id}>
            <section className="card help-item" aria-labelledby={`problem-${problem.id}`}>
              <h2 id={`problem-${problem.id}`} className="card-title">
                <span className="help-number" aria-hidden="true">
                  {index + 1}
                </span>
                {problem.title}
              </h2>
              <div className="help-body">{problem.body}</div>
              {problem.actions ? <div className="help-actions">{problem.actions}</div> : null}
            </section>
          </li>
        ))}
      </ol>
      <section className="card help-item help-promise" aria-labelledby="problem-feedback">
        <h2 id="problem-feedback" className="card-title">
          还是不能解决？
        </h2>
        <p>{FEEDBACK_PROMISE}</p>
        <div className="help-actions">
          <FeedbackButton />
        </div>
      </section>
    </div>
  );
}
