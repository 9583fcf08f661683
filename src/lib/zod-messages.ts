/**
 * Chinese validation messages for every zod schema, installed by importing this module: the server
 * (src/rpc/call.ts, cli/shared.ts) and the SPA (web/no-eval.ts) import it once. A message written
 * in a schema (`.min(1, "名称不能为空")`) still wins: zod ranks a schema's own message above the
 * global customError. Issues not handled here fall back to zod's zh-CN locale.
 */
import { z } from "zod";

type Issue = Parameters<z.core.$ZodErrorMap>[0];

export const NOT_A_NUMBER = "请输入数字";
export const REQUIRED = "必填";

const NUMERIC = new Set(["number", "int", "bigint"]);
const COUNTED = new Set(["array", "set", "map"]);

const TYPE_MESSAGES: Record<string, string> = {
  number: NOT_A_NUMBER,
  int: NOT_A_NUMBER,
  bigint: NOT_A_NUMBER,
  string: "须为文本",
  boolean: "须为是或否",
  array: "须为列表",
  date: "须为日期",
};

function invalidType(issue: Extract<Issue, { code: "invalid_type" }>): string {
  if (issue.input === undefined || issue.input === null) return REQUIRED;
  if (issue.expected === "int" && typeof issue.input === "number" && Number.isFinite(issue.input)) {
    return "须为整数";
  }
  return TYPE_MESSAGES[issue.expected] ?? "格式错误";
}

function tooSmall(issue: Extract<Issue, { code: "too_small" }>): string {
  const min = String(issue.minimum);
  if (NUMERIC.has(issue.origin)) return issue.inclusive ? `不能小于 ${min}` : `须大于 ${min}`;
  if (issue.origin === "string") {
    if (issue.exact) return `须为 ${min} 个字符`;
    return min === "1" ? "不能为空" : `至少 ${min} 个字符`;
  }
  if (COUNTED.has(issue.origin)) return issue.exact ? `须为 ${min} 项` : `至少 ${min} 项`;
  return issue.origin === "date" ? "日期过早" : "过小";
}

function tooBig(issue: Extract<Issue, { code: "too_big" }>): string {
  const max = String(issue.maximum);
  if (NUMERIC.has(issue.origin)) return issue.inclusive ? `不能大于 ${max}` : `须小于 ${max}`;
  if (issue.origin === "string") return issue.exact ? `须为 ${max} 个字符` : `最多 ${max} 个字符`;
  if (COUNTED.has(issue.origin)) return issue.exact ? `须为 ${max} 项` : `最多 ${max} 项`;
  return issue.origin === "date" ? "日期过晚" : "过大";
}

function invalidFormat(issue: Extract<Issue, { code: "invalid_format" }>): string {
  if (issue.format === "email") return "邮箱格式错误";
  if (issue.format === "url") return "网址格式错误";
  if (issue.format === "starts_with" && "prefix" in issue) return `须以 ${issue.prefix} 开头`;
  if (issue.format === "ends_with" && "suffix" in issue) return `须以 ${issue.suffix} 结尾`;
  return "格式错误";
}

/** 0.01 → 2; null when the divisor is not a power of ten below 1. */
function decimalPlaces(divisor: number): number | null {
  for (let places = 1; places <= 8; places += 1) {
    if (Math.abs(divisor - 10 ** -places) < 1e-12) return places;
  }
  return null;
}

function notMultipleOf(issue: Extract<Issue, { code: "not_multiple_of" }>): string {
  const divisor = Number(issue.divisor);
  if (divisor === 1) return "须为整数";
  const places = decimalPlaces(divisor);
  return places === null ? `须为 ${issue.divisor} 的倍数` : `最多 ${places} 位小数`;
}

/**
 * A union names the branch that came closest: the first whose problem is more than "wrong kind of
 * value" (e.g. `id.or(z.literal(""))` given "abc" reports the id's own message).
 */
function invalidUnion(issue: Extract<Issue, { code: "invalid_union" }>): string {
  const near = issue.errors.find(
    (branch) => branch[0] && branch[0].code !== "invalid_type" && branch[0].code !== "invalid_value",
  );
  return near?.[0]?.message ?? "格式错误";
}

/** The global customError: a concise Chinese message, or undefined for zod's zh-CN locale. */
export function chineseMessage(issue: Issue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      return invalidType(issue);
    case "too_small":
      return tooSmall(issue);
    case "too_big":
      return tooBig(issue);
    case "invalid_format":
      return invalidFormat(issue);
    case "not_multiple_of":
      return notMultipleOf(issue);
    case "invalid_value":
      return "选项无效";
    case "unrecognized_keys":
      return `不支持的字段：${issue.keys.join("、")}`;
    case "invalid_union":
      return invalidUnion(issue);
    case "invalid_key":
      return "键无效";
    case "invalid_element":
      return "含有无效的值";
    case "custom":
      return "输入无效";
    default:
      return undefined;
  }
}

z.config({ ...z.locales.zhCN(), customError: chineseMessage });
