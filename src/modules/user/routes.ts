import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { readJsonBody } from "../../lib/http.ts";
import { type CallContext, defineCall, requestOrigin, sessionToken } from "../../rpc/call.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { type CookieOptions, days, isHttps, serializeCookie } from "../../rpc/cookies.ts";
import { requestView } from "../../rpc/request-view.ts";
import { runAs } from "../audit/service.ts";
import {
  confirmPasswordChange,
  confirmSignup,
  requestPasswordReset,
  sendSignupConfirmation,
} from "./confirm.ts";
import { deviceCookieName, logIn, logInWithCode, TRUSTED_DEVICE_DAYS } from "./login.ts";
import { changeUseInfo } from "./profile.ts";
import type { UserRow } from "./row.ts";
import {
  ConfirmMsg,
  changeUseInfoInput,
  confirmPasswordInput,
  confirmQuery,
  DEFAULT_ICON,
  emptyInput,
  getEmailInput,
  loginInput,
  NO_CHANNEL_CODE,
  resetPasswordInput,
  signupInput,
} from "./schema.ts";
import { createUser, resetUserkey, userFromSubscriptionUrl, userInfo } from "./service.ts";
import { createSession, deleteSession, SESSION_DAYS } from "./session.ts";
import {
  addPasskey,
  disableTotp,
  enableTotp,
  isTotpEnabled,
  mustEnrolTotp,
  type PasskeyPlace,
  passkeyRegistrationOptions,
  setupTotp,
  totpStatus,
} from "./two-factor.ts";
import {
  loginPasskeyInput,
  loginTotpInput,
  passkeyRegisterInput,
  totpCodeInput,
} from "./two-factor-schema.ts";

const MINUTE = 60_000;

/** The `token` cookie of a new session (the server's row decides how long the session lasts). */
const SESSION_COOKIE: CookieOptions = { httpOnly: true, maxAgeSeconds: days(SESSION_DAYS) };

/** A new session for the account, for the browser that sent `request`; answers its raw token. */
const openSession = async (app: AppContext, userId: string, request: Request, ip: string) =>
  await createSession(app, userId, ip, request.headers.get("user-agent") ?? "");

async function startSession(ctx: CallContext, userId: string) {
  ctx.setCookie("token", await openSession(ctx.app, userId, ctx.request, ctx.ip), SESSION_COOKIE);
}

/** A finished login (password, and the code when the account has 2FA): session, trusted browser, user info. */
async function answerLogin(ctx: CallContext, { user, deviceToken }: { user: UserRow; deviceToken: string }) {
  await startSession(ctx, user.id);
  ctx.setCookie(deviceCookieName(user.id), deviceToken, {
    httpOnly: true,
    maxAgeSeconds: days(TRUSTED_DEVICE_DAYS),
  });
  return await userInfo(ctx.app, user);
}

/** The signed-in account of a "user" call (runCall guarantees it). */
const signedIn = (ctx: CallContext) => ctx.user as UserRow;

/** Runs a change as the signed-in account, so that its audit row names it (customers too). */
const asAccount = <T>(ctx: CallContext, run: () => Promise<T>) =>
  runAs({ name: signedIn(ctx).email, userId: signedIn(ctx).id, ip: ctx.ip }, run);

/**
 * Where a passkey is made or used: the origin the browser is on (the scheme and host it came to,
 * honouring a trusted proxy) and that host as the WebAuthn RP id.
 */
function passkeyPlace(ctx: CallContext): PasskeyPlace {
  const origin = requestOrigin(ctx.request);
  return { origins: [origin], rpId: new URL(origin).hostname };
}

/** Wrong codes when turning 2FA on or off, per account (the login's second step has the login limits). */
const TOTP_CODE_LIMIT = {
  rule: { name: "totp-code", max: 10, windowMs: 10 * MINUTE },
  key: (_input: unknown, ctx: CallContext) => ctx.user?.id ?? ctx.ip,
};

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
        // The seed's client sends the default logo; a link from elsewhere is never stored.
        icon: DEFAULT_ICON,
        firstUrl: ctx.request.headers.get("referer")?.slice(0, 500) ?? "",
      });
      await startSession(ctx, user.id);
      await sendSignupConfirmation(ctx.app, user);
      return await userInfo(ctx.app, user);
    },
  }),
  defineCall({
    path: "/api/user/login",
    access: "public",
    input: loginInput,
    // No attempt limits here: logIn counts failures (per account, address and trusted browser).
    async handle(ctx, input) {
      const login = await logIn(ctx.app, {
        email: input.email,
        passwordDigest: input.password,
        ip: ctx.ip,
        deviceTokenFor: (userId) => ctx.cookies[deviceCookieName(userId)],
      });
      return await answerLogin(ctx, login);
    },
  }),
  defineCall({
    path: "/api/user/login_totp",
    access: "public",
    input: loginTotpInput,
    // Wrong codes count toward the login's failure limits inside logInWithCode.
    async handle(ctx, input) {
      const login = await logInWithCode(ctx.app, {
        challenge: input.challenge,
        factor: { code: input.code },
        ip: ctx.ip,
        deviceTokenFor: (userId) => ctx.cookies[deviceCookieName(userId)],
      });
      return await answerLogin(ctx, login);
    },
  }),
  defineCall({
    path: "/api/user/login_passkey",
    access: "public",
    input: loginPasskeyInput,
    // A failed passkey counts toward the login's failure limits inside logInWithCode.
    async handle(ctx, { challenge, ...passkey }) {
      const login = await logInWithCode(ctx.app, {
        challenge,
        factor: { passkey, expected: passkeyPlace(ctx) },
        ip: ctx.ip,
        deviceTokenFor: (userId) => ctx.cookies[deviceCookieName(userId)],
      });
      return await answerLogin(ctx, login);
    },
  }),
  defineCall({
    path: "/api/user/passkey_options",
    access: "user",
    input: emptyInput,
    limits: [TOTP_CODE_LIMIT],
    handle: async (ctx) => await passkeyRegistrationOptions(ctx.app, signedIn(ctx), passkeyPlace(ctx)),
  }),
  defineCall({
    path: "/api/user/passkey_add",
    access: "user",
    input: passkeyRegisterInput,
    limits: [TOTP_CODE_LIMIT],
    handle: (ctx, input) =>
      asAccount(ctx, () => addPasskey(ctx.app, signedIn(ctx), input, passkeyPlace(ctx))),
  }),
  defineCall({
    path: "/api/user/totp_status",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await totpStatus(ctx.app, signedIn(ctx).id, ctx.role),
  }),
  defineCall({
    path: "/api/user/totp_setup",
    access: "user",
    input: emptyInput,
    limits: [TOTP_CODE_LIMIT],
    handle: async (ctx) => await setupTotp(ctx.app, signedIn(ctx)),
  }),
  defineCall({
    path: "/api/user/totp_enable",
    access: "user",
    input: totpCodeInput,
    limits: [TOTP_CODE_LIMIT],
    handle: (ctx, input) => asAccount(ctx, () => enableTotp(ctx.app, signedIn(ctx), input.code)),
  }),
  defineCall({
    path: "/api/user/totp_disable",
    access: "user",
    input: totpCodeInput,
    limits: [TOTP_CODE_LIMIT],
    handle: (ctx, input) => asAccount(ctx, () => disableTotp(ctx.app, signedIn(ctx), input.code)),
  }),
  defineCall({
    path: "/api/user/logout",
    access: "public",
    input: emptyInput,
    async handle(ctx) {
      await deleteSession(ctx.app, sessionToken(ctx.request));
      ctx.setCookie("token", "", { httpOnly: true, maxAgeSeconds: 0 });
      return null;
    },
  }),
  defineCall({
    path: "/api/user/userinfo",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => ({
      ...(await userInfo(ctx.app, signedIn(ctx))),
      mustEnrolTotp: await mustEnrolTotp(ctx.app, signedIn(ctx).id, ctx.role),
    }),
  }),
  defineCall({
    path: "/api/user/get_email",
    access: "public",
    input: getEmailInput,
    limits: [{ rule: { name: "get-email-ip", max: 20, windowMs: 10 * MINUTE }, key: "ip" }],
    handle: async (ctx, input) => (await userFromSubscriptionUrl(ctx.app, input.describUrl)).email,
  }),
  defineCall({
    path: "/api/user/reset_password",
    access: "public",
    input: resetPasswordInput,
    // Per account it is limited inside, once the subscription link has proved which account.
    limits: [{ rule: { name: "reset-ip", max: 10, windowMs: 60 * MINUTE }, key: "ip" }],
    handle: (ctx, input) =>
      requestPasswordReset(ctx.app, {
        describUrl: input.describUrl,
        email: input.email,
        newPasswordDigest: input.password,
      }),
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
    handle: async (ctx) => await resetUserkey(ctx.app, ctx.user?.id ?? ""),
  }),
  defineCall({
    path: "/api/user/change_use_info",
    access: "user",
    input: changeUseInfoInput,
    limits: [
      {
        rule: { name: "change-use-info", max: 30, windowMs: 10 * MINUTE },
        key: (_input, ctx) => ctx.user?.id ?? ctx.ip,
      },
    ],
    handle: async (ctx, input) => await changeUseInfo(ctx.app, ctx.user?.id ?? "", input),
  }),
];

type AccountAnswer = { Code: number; msg: string };

/** Runs a confirm-link action and answers `{Code, msg}` as seed 000 §7 shows. */
async function accountAnswer(run: () => unknown): Promise<AccountAnswer> {
  try {
    await run();
    return { Code: Code.ok, msg: "ok" };
  } catch (error) {
    if (error instanceof RpcError) return { Code: error.code, msg: error.message };
    throw error;
  }
}

const BAD_LINK: AccountAnswer = { Code: Code.badInput, msg: ConfirmMsg.invalid };

/**
 * The confirm links, answered as plain JSON `{Code, msg}`. A sign-up link confirms on open
 * (`GET /api/account/signup_confirm?serial_id&key`); a password change needs the new password
 * typed again on the confirm page (`POST /api/account/change_password`), so opening it changes
 * nothing, and the browser that confirms gets a fresh session while every other one ends.
 */
export function accountRoutes(app: AppContext) {
  return new Elysia()
    .get("/api/account/signup_confirm", ({ query }) => {
      const parsed = confirmQuery.safeParse(query);
      if (!parsed.success) return BAD_LINK;
      return accountAnswer(async () => await confirmSignup(app, parsed.data.serial_id, parsed.data.key));
    })
    .get("/api/account/change_password", () => ({ Code: Code.badInput, msg: ConfirmMsg.typeAgain }))
    .post(
      "/api/account/change_password",
      async ({ request, set }) => {
        const parsed = confirmPasswordInput.safeParse(await readJsonBody(request, 4096));
        if (!parsed.success) {
          const badPassword = parsed.error.issues.some((issue) => issue.path[0] === "password");
          return badPassword ? { Code: Code.badInput, msg: ConfirmMsg.badPassword } : BAD_LINK;
        }
        const { serial_id, key, password } = parsed.data;
        return accountAnswer(async () => {
          const userId = await confirmPasswordChange(app, serial_id, key, password);
          // With two-factor login the new password alone opens nothing: the owner logs in with a code.
          if (await isTotpEnabled(app, userId)) return;
          const token = await openSession(app, userId, request, requestView(request).ip);
          set.headers["set-cookie"] = serializeCookie("token", token, {
            ...SESSION_COOKIE,
            secure: isHttps(request),
          });
        });
      },
      { parse: "none" },
    );
}
