import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { type CallContext, defineCall, requestOrigin, sessionToken } from "../../rpc/call.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { days } from "../../rpc/cookies.ts";
import { recordError } from "../errors/service.ts";
import { type ConfirmAction, confirmLink, sendConfirmation } from "./confirm.ts";
import {
  confirmQuery,
  emptyInput,
  getEmailInput,
  loginInput,
  NO_CHANNEL_CODE,
  resetPasswordInput,
  signupInput,
} from "./schema.ts";
import { createUser, resetUserkey, userFromSubscriptionUrl, userInfo, verifyLogin } from "./service.ts";
import { createSession, deleteSession, SESSION_DAYS } from "./session.ts";

const MINUTE = 60_000;
const perEmail = (input: { email: string }) => input.email;

/** Links in e-mails point at the preferred domain when one is set, else at the site the request came to. */
function siteOrigin(ctx: CallContext): string {
  const preferred = ctx.app.settings.get("preferDomain");
  if (preferred) return preferred.startsWith("http") ? preferred.replace(/\/$/, "") : `https://${preferred}`;
  return requestOrigin(ctx);
}

function startSession(ctx: CallContext, userId: string) {
  const token = createSession(ctx.app, userId, ctx.ip, ctx.request.headers.get("user-agent") ?? "");
  ctx.setCookie("token", token, { httpOnly: true, maxAgeSeconds: days(SESSION_DAYS) });
}

export const userCalls = [
  defineCall({
    path: "/api/user/signup",
    access: "public",
    input: signupInput,
    limits: [{ rule: { name: "signup-ip", max: 10, windowMs: 60 * MINUTE }, key: "ip" }],
    async handle(ctx, input) {
      const cookieCode = ctx.cookies.channel_code ?? "";
      const user = await createUser(ctx.app, {
        email: input.email,
        passwordDigest: input.password,
        channelCode: cookieCode === NO_CHANNEL_CODE ? "" : cookieCode.slice(0, 64),
        icon: input.icon_url,
        firstUrl: ctx.request.headers.get("referer")?.slice(0, 500) ?? "",
      });
      startSession(ctx, user.id);
      if (ctx.app.mailer.configured()) {
        await sendConfirmation(ctx.app, user, "signup_confirm", siteOrigin(ctx)).catch((error) => {
          // The account exists and works; a mail failure must not undo the sign-up.
          console.error("signup confirmation mail failed", error);
        });
      }
      return userInfo(ctx.app, user);
    },
  }),
  defineCall({
    path: "/api/user/login",
    access: "public",
    input: loginInput,
    limits: [
      { rule: { name: "login-ip", max: 30, windowMs: 10 * MINUTE }, key: "ip" },
      { rule: { name: "login-account", max: 10, windowMs: 10 * MINUTE }, key: perEmail },
    ],
    async handle(ctx, input) {
      const user = await verifyLogin(ctx.app, input.email, input.password);
      if (!user) throw new RpcError(Code.badInput, "用户不存在或密码错误");
      startSession(ctx, user.id);
      return userInfo(ctx.app, user);
    },
  }),
  defineCall({
    path: "/api/user/logout",
    access: "public",
    input: emptyInput,
    handle(ctx) {
      deleteSession(ctx.app, sessionToken(ctx.request));
      ctx.setCookie("token", "", { httpOnly: true, maxAgeSeconds: 0 });
      return null;
    },
  }),
  defineCall({
    path: "/api/user/userinfo",
    access: "user",
    input: emptyInput,
    handle: (ctx) => userInfo(ctx.app, ctx.user as NonNullable<typeof ctx.user>),
  }),
  defineCall({
    path: "/api/user/get_email",
    access: "public",
    input: getEmailInput,
    limits: [{ rule: { name: "get-email-ip", max: 20, windowMs: 10 * MINUTE }, key: "ip" }],
    handle: (ctx, input) => userFromSubscriptionUrl(ctx.app, input.describUrl).email,
  }),
  defineCall({
    path: "/api/user/reset_password",
    access: "public",
    input: resetPasswordInput,
    limits: [
      { rule: { name: "reset-ip", max: 10, windowMs: 60 * MINUTE }, key: "ip" },
      { rule: { name: "reset-account", max: 5, windowMs: 60 * MINUTE }, key: perEmail },
    ],
    async handle(ctx, input) {
      const user = userFromSubscriptionUrl(ctx.app, input.describUrl);
      if (user.email.toLowerCase() !== input.email) throw new RpcError(Code.badInput, "邮箱与订阅链接不匹配");
      if (!user.can_change_password) throw new RpcError(Code.accountRefused, "该账号不允许这样操作。");
      if (!ctx.app.mailer.configured()) {
        throw new RpcError(Code.badInput, "邮件服务未配置，无法通过邮件确认，请联系管理员修改密码");
      }
      try {
        await sendConfirmation(ctx.app, user, "change_password", siteOrigin(ctx), input.password);
      } catch (error) {
        recordError(ctx.app.db, "reset_password mail", error);
        throw new RpcError(Code.internal, "确认邮件发送失败，请稍后重试");
      }
      return { email: user.email };
    },
  }),
  defineCall({
    path: "/api/user/reset_userkey",
    access: "user",
    input: emptyInput,
    limits: [
      {
        rule: { name: "reset-userkey", max: 10, windowMs: 60 * MINUTE },
        key: (_input, ctx) => ctx.user?.id ?? ctx.ip,
      },
    ],
    handle: (ctx) => resetUserkey(ctx.app, ctx.user?.id ?? ""),
  }),
];

/** The confirm links (`GET /api/account/{action}?serial_id&key`), answered as plain JSON `{Code, msg}`. */
export function accountRoutes(app: AppContext) {
  const confirm =
    (action: ConfirmAction) =>
    ({ query }: { query: Record<string, string | undefined> }) => {
      const parsed = confirmQuery.safeParse(query);
      if (!parsed.success) return { Code: Code.badInput, msg: "链接无效" };
      try {
        confirmLink(app, action, parsed.data.serial_id, parsed.data.key);
        return { Code: Code.ok, msg: "ok" };
      } catch (error) {
        if (error instanceof RpcError) return { Code: error.code, msg: error.message };
        throw error;
      }
    };
  return new Elysia()
    .get("/api/account/signup_confirm", confirm("signup_confirm"))
    .get("/api/account/change_password", confirm("change_password"));
}
