/**
 * What the bot does with an update (issue 13 §5). Every update is a stranger's input: only text
 * messages from private chats are read, commands are matched whole, arguments by strict patterns,
 * nothing the sender wrote is echoed, and answers are plain text. Answers go through the outbox
 * like every other message, queued in the transaction that handles the update.
 */
import type { AppContext } from "../../context.ts";
import type { RateRule } from "../../rpc/rate-limit.ts";
import { subscriptionOrigin, subscriptionUrl } from "../../subscription/clients.ts";
import { deviceUsageText } from "../device/service.ts";
import { listNotices } from "../notice/service.ts";
import { siteOrigin } from "../settings/schema.ts";
import { signUseReply } from "../signuse/service.ts";
import type { UserRow } from "../user/row.ts";
import type { TgMessage, TgUpdate } from "./api.ts";
import { accountOfChat, BotBindMsg, bindChat, deleteBinding, UNBOUND_TEXT } from "./bind.ts";
import { queueChatMessage } from "./outbox.ts";
import { BIND_KEYWORD } from "./schema.ts";
import { trafficText } from "./texts.ts";

/** Messages one chat may have answered in a window; more are read and ignored (no reply floods). */
const CHAT_RULE: RateRule = { name: "telegram-chat", max: 30, windowMs: 60_000 };
/** Longer texts are not commands. */
const MAX_COMMAND_CHARS = 200;
/** Notices /notices lists. */
const NOTICES_SHOWN = 5;

interface BoundCommand {
  name: string;
  help: string;
  run(ctx: AppContext, user: UserRow, now: number): string | Promise<string>;
}

/**
 * The commands of a bound chat, in /help's order. Extension point: check-in (issue 14) adds its
 * `/checkin` entry here, calling the check-in service, once that service exists.
 */
export const BOUND_COMMANDS: readonly BoundCommand[] = [
  {
    name: "traffic",
    help: "剩余流量与时间套餐",
    run: async (ctx, user, now) => await trafficText(ctx, user, now),
  },
  {
    name: "sub",
    help: "订阅链接与设备数",
    run: async (ctx, user, now) =>
      `${await subscriptionText(ctx, user)}\n${await deviceUsageText(ctx, user.id, now)}`,
  },
  { name: "notices", help: "最新通知", run: async (ctx, user) => await noticesText(ctx, user) },
  { name: "checkin", help: "每日签到", run: async (ctx, user, now) => await signUseReply(ctx, user.id, now) },
  {
    name: "unbind",
    help: "解除绑定",
    run: async (ctx, user) => {
      await deleteBinding(ctx, user.id);
      return UNBOUND_TEXT;
    },
  },
  { name: "help", help: "显示本帮助", run: () => helpText() },
];

export function helpText(): string {
  return [
    "可用命令：",
    ...BOUND_COMMANDS.map((command) => `/${command.name} — ${command.help}`),
    "",
    "订单支付、工单回复、流量不足和套餐到期时，我会主动通知你。",
  ].join("\n");
}

const unboundText = () =>
  [
    "你好！我是网站的通知机器人。",
    `绑定账号：登录网站，打开「个人信息」页，复制其中的绑定命令（${BIND_KEYWORD} <用户ID> <绑定码>）发给我。`,
  ].join("\n");

async function subscriptionText(ctx: AppContext, user: UserRow): Promise<string> {
  const settings = await ctx.settings.all();
  const site = siteOrigin(settings);
  if (!settings.describe_host.trim() && !site) {
    return "站点地址尚未配置，暂时无法在这里给出订阅链接，请到网站的「订阅」页复制。";
  }
  const url = subscriptionUrl(subscriptionOrigin(settings.describe_host, site ?? ""), "auto", {
    _id: user.id,
    userkey: user.userkey,
  });
  return `你的订阅链接（请勿泄露；泄露后可在网站重置）：\n${url}`;
}

async function noticesText(ctx: AppContext, user: UserRow): Promise<string> {
  const notices = (await listNotices(ctx, user.id)).slice(0, NOTICES_SHOWN);
  if (notices.length === 0) return "暂无新通知。";
  const site = siteOrigin(await ctx.settings.all());
  const line = (notice: { desc: string; href: string }) => {
    const href = notice.href.startsWith("/") && site ? `${site}${notice.href}` : notice.href;
    return href ? `• ${notice.desc}\n  ${href}` : `• ${notice.desc}`;
  };
  return ["最新通知：", ...notices.map(line)].join("\n");
}

/** "/traffic@MyBot extra" → { name: "traffic", args: ["extra"] }; null when not a command. */
export function parseCommand(text: string): { name: string; args: string[] } | null {
  const words = text.trim().split(/\s+/);
  const match = /^\/([a-z_]{1,32})(?:@[A-Za-z0-9_]{1,64})?$/i.exec(words[0] ?? "");
  if (!match?.[1]) return null;
  return { name: match[1].toLowerCase(), args: words.slice(1, 4) };
}

/**
 * Handles one update (inside the caller's transaction); true when an answer was queued. Updates
 * of other kinds, other chats than private ones, bots and over-long texts get nothing.
 */
export async function handleUpdate(ctx: AppContext, update: TgUpdate, now = Date.now()): Promise<boolean> {
  const message = update.message;
  if (!isPrivateText(message)) return false;
  const chatId = message.chat.id;
  // Counted in the caller's transaction: if it rolls back, so does the count.
  if (!(await ctx.limiter.reserve([{ rule: CHAT_RULE, key: String(chatId) }], now))) return false;
  const reply = await answerFor(ctx, message, now);
  if (!reply) return false;
  await queueChatMessage(ctx, chatId, reply);
  return true;
}

function isPrivateText(message: TgMessage | undefined): message is TgMessage & { text: string } {
  return (
    message !== undefined &&
    message.chat?.type === "private" &&
    Number.isSafeInteger(message.chat.id) &&
    typeof message.text === "string" &&
    message.text.length <= MAX_COMMAND_CHARS &&
    message.from?.is_bot !== true
  );
}

async function answerFor(
  ctx: AppContext,
  message: TgMessage & { text: string },
  now: number,
): Promise<string> {
  const chatId = message.chat.id;
  const command = parseCommand(message.text);
  if (command?.name === "bind" || (command?.name === "start" && command.args.length > 0)) {
    return await bindAnswer(
      ctx,
      message,
      command.name === "bind" ? command.args : startArgs(command.args[0]),
      now,
    );
  }
  const user = await accountOfChat(ctx, chatId);
  if (!user) return unboundText();
  if (user.disabled === 1) return "此账号已被停用。";
  const bound = BOUND_COMMANDS.find((entry) => entry.name === command?.name);
  return bound ? await bound.run(ctx, user, now) : helpText();
}

/** The deep link's start parameter "<userId>_<code>" as /bind's arguments. */
function startArgs(parameter: string | undefined): string[] {
  return (parameter ?? "").split("_").slice(0, 2);
}

async function bindAnswer(ctx: AppContext, message: TgMessage, args: string[], now: number): Promise<string> {
  const [userId, code] = args;
  if (!userId || !code) return BotBindMsg.usage;
  const outcome = await bindChat(ctx, message.chat.id, message.from, userId.toLowerCase(), code, now);
  if (!outcome.ok) return BotBindMsg[outcome.reason];
  return [
    `绑定成功！已绑定账号 ${outcome.email}。`,
    outcome.replacedAccount ? "此 Telegram 之前绑定的账号已解除绑定。" : "",
    helpText(),
  ]
    .filter(Boolean)
    .join("\n");
}
