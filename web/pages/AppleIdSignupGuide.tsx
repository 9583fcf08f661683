/** 注册非大陆 Apple ID 教程 /apple_id_signup_guide (seed 000 §2): a static five-step article. */
import type { ReactNode } from "react";

const APPLE_ID_SIGNUP_URL = "https://appleid.apple.com/account";

interface Step {
  title: string;
  body: ReactNode;
}

export const SIGNUP_STEPS: Step[] = [
  {
    title: "准备邮箱和手机号",
    body: (
      <p>
        准备一个从未注册过 Apple ID 的邮箱（推荐 Gmail 或 Outlook）和一个能接收短信的手机号（中国大陆 +86
        手机号也可以用于验证）。
      </p>
    ),
  },
  {
    title: "打开 Apple ID 注册页面",
    body: (
      <p>
        在电脑或手机浏览器中打开{" "}
        <a href={APPLE_ID_SIGNUP_URL} target="_blank" rel="noreferrer noopener">
          {APPLE_ID_SIGNUP_URL}
        </a>
        ，点击「创建您的 Apple ID」。建议先连上与目标地区相同的节点（如美国节点），注册更顺利。
      </p>
    ),
  },
  {
    title: "选择地区并填写资料",
    body: (
      <p>
        「国家或地区」选择中国大陆以外的地区（如美国、香港），再填写姓名、出生日期（须年满 18
        周岁）、邮箱和密码。密码请自己妥善保存。
      </p>
    ),
  },
  {
    title: "验证邮箱和手机号",
    body: <p>输入邮箱收到的 6 位验证码，再输入手机短信收到的验证码，完成后 Apple ID 即创建成功。</p>,
  },
  {
    title: "在 App Store 登录并完善资料",
    body: (
      <p>
        在 iPhone 上打开 App Store，点击右上角头像，退出原来的账号后用新 Apple ID 登录（只在 App Store
        中登录，不要在「设置」中登录 iCloud）。首次登录提示「此 Apple ID 尚未在 iTunes Store
        使用过」时点击「检查」，同意条款，付款方式选择「无」，账单地址填写所选地区的任一地址，完成后即可下载客户端。
      </p>
    ),
  },
];

export function AppleIdSignupGuidePage() {
  return (
    <div className="page help-page">
      <h1 className="page-title">注册非大陆 Apple ID 教程</h1>
      <p className="help-lead">
        按以下五步注册一个自己的非大陆 Apple ID，用来下载中国大陆区 App Store 没有的客户端。
      </p>
      <ol className="help-list">
        {SIGNUP_STEPS.map((step, index) => (
          <li key={step.title}>
            <section className="card help-item" aria-labelledby={`signup-step-${index + 1}`}>
              <h2 id={`signup-step-${index + 1}`} className="card-title">
                第 {index + 1} 步：{step.title}
              </h2>
              <div className="help-body">{step.body}</div>
            </section>
          </li>
        ))}
      </ol>
      <p className="help-lead">
        不想注册？付费用户可以使用<a href="#/apple_id_share">共享 Apple ID</a>。
      </p>
    </div>
  );
}
