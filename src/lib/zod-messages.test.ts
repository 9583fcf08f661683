/**
 * Every validation message is Chinese (issue 12): the settings' bounds and kinds through the real
 * set_config call (what the admin's failure toast shows), and every field of the node, line,
 * combo and entry inputs given values of the wrong kind, size or form, checked through the same
 * server process and, for one case each, through its call. Field names in the path, and the product
 * names and format examples some schemas write in their own messages (WRITTEN_WORDS), are the only
 * Latin words left.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { type ApiClient, startWithAdmin, type TestServer } from "../../tests/harness.ts";
import { comboInput } from "../modules/combo/schema.ts";
import { entryInput } from "../modules/entry/schema.ts";
import { lineInput } from "../modules/line/schema.ts";
import { agentInput } from "../modules/node-record/schema.ts";
import { type SettingKey, settingsSchema } from "../modules/settings/schema.ts";
import { Code } from "../rpc/codes.ts";

let server: TestServer;
let admin: ApiClient;

beforeAll(async () => ({ server, admin } = await startWithAdmin()));
afterAll(() => server?.close());

/** Latin words schemas write on purpose in their own messages: product names, format examples. */
const WRITTEN_WORDS =
  /\b(Reality|BotFather|host|VMess|WebSocket|Hysteria2|UDP|CDN|http\(s\)|IANA|Asia\/Shanghai)/g;
/** A Latin word of three letters or more left in a message once those are removed. */
const latinWord = (message: string) => /[A-Za-z]{3,}/.exec(message.replace(WRITTEN_WORDS, ""))?.[0];

/** The server's 1000 answer `参数错误 {path}: {message}`, split; the path is the field's name. */
function refusal(answer: { code: number; msg: string }): { path: string; message: string } {
  expect(answer.code).toBe(Code.badInput);
  const match = /^参数错误 (?:([\w.]+): )?(.*)$/.exec(answer.msg);
  expect(match, answer.msg).not.toBeNull();
  return { path: match?.[1] ?? "", message: match?.[2] ?? "" };
}

const BAD_VALUES: unknown[] = [
  undefined,
  null,
  "abc",
  "bad value!",
  "x".repeat(5000),
  -1,
  1.5,
  1e20,
  Number.NaN,
  true,
  [],
  ["bad value!"],
  {},
];

describe("settings through /api/admin/config/set_config", () => {
  const numbers = Object.entries(settingsSchema.shape).flatMap(([key, field]) => {
    const inner = field.removeDefault();
    return inner instanceof z.ZodNumber ? [{ key: key as SettingKey, number: inner }] : [];
  });

  test("a value past each bound is refused in Chinese, naming the bound; nothing is stored", async () => {
    expect(numbers.length).toBeGreaterThan(10);
    const before = await server.context.settings.all();
    for (const { key, number } of numbers) {
      const min = number.minValue;
      const max = number.maxValue;
      if (min !== null && min > Number.MIN_SAFE_INTEGER) {
        const below = await admin.call("/api/admin/config/set_config", { [key]: min - 1 });
        expect({ key, ...refusal(below) }).toEqual({ key, path: key, message: `不能小于 ${min}` });
      }
      if (max !== null && max < Number.MAX_SAFE_INTEGER) {
        const above = await admin.call("/api/admin/config/set_config", { [key]: max + 1 });
        expect({ key, ...refusal(above) }).toEqual({ key, path: key, message: `不能大于 ${max}` });
      }
      const text = await admin.call("/api/admin/config/set_config", { [key]: "abc" });
      expect({ key, ...refusal(text) }).toEqual({ key, path: key, message: "请输入数字" });
    }
    expect(await server.context.settings.all()).toEqual(before);
  });

  test("the toast of issue 12: 汇率 0", async () => {
    const answer = await admin.call("/api/admin/config/set_config", { exchange_rate: 0 });
    expect(answer.msg).toBe("参数错误 exchange_rate: 不能小于 0.01");
  });

  test("every setting given a value of the wrong kind or size: no English", async () => {
    const before = await server.context.settings.all();
    const failures: string[] = [];
    for (const key of Object.keys(settingsSchema.shape)) {
      for (const value of BAD_VALUES) {
        if (value === undefined || Number.isNaN(value)) continue; // not expressible in JSON
        const answer = await admin.call("/api/admin/config/set_config", { [key]: value });
        if (answer.code === Code.ok) {
          // A value of the right kind is stored: put the setting back (totp_required_staff = true
          // would keep this admin, who has no second factor, to the enrolment calls).
          await server.context.settings.update({ [key]: before[key as keyof typeof before] });
          continue;
        }
        const { path, message } = refusal(answer);
        // A list setting (webhooks) names the element: "webhooks.0".
        expect(path.split(".")[0]).toBe(key);
        if (latinWord(message)) failures.push(`${key} = ${JSON.stringify(value)}: ${message}`);
      }
    }
    expect(failures).toEqual([]);
    const unknown = await admin.call("/api/admin/config/set_config", { nope: 1 });
    expect(unknown.msg).toBe("参数错误 不支持的字段：nope");
  });
});

const VALID = {
  agent: {
    name: "节点",
    type: "v2ray",
    ip: "203.0.113.1",
    ctrl_port: 888,
    zz_port: 20000,
    port: 10000,
    public_port: 10000,
    serverType: "ubuntu_x86",
  },
  line: { name: "线路", agentID: "a".repeat(24), protocol: "vmesh_tcp", bridge: "none" },
  combo: { name: "套餐", price: 1, traffic: 1, vipDuration: 0 },
  entry: { name: "入口", ip: "203.0.113.2" },
};

const INPUTS = [
  { name: "agent", schema: agentInput, valid: VALID.agent },
  { name: "line", schema: lineInput, valid: VALID.line },
  { name: "combo", schema: comboInput, valid: VALID.combo },
  { name: "entry", schema: entryInput, valid: VALID.entry },
] as const;

describe("node, line, combo and entry inputs", () => {
  test("each field given a value of the wrong kind, size or form: every message is Chinese", () => {
    const failures: string[] = [];
    let refused = 0;
    for (const { name, schema, valid } of INPUTS) {
      expect(schema.safeParse(valid).success).toBe(true);
      for (const key of Object.keys(schema.shape)) {
        for (const value of BAD_VALUES) {
          const parsed = schema.safeParse({ ...valid, [key]: value });
          if (parsed.success) continue;
          refused += 1;
          for (const issue of parsed.error.issues) {
            if (latinWord(issue.message)) {
              failures.push(`${name}.${key} = ${JSON.stringify(value)}: ${issue.message}`);
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(refused).toBeGreaterThan(200);
  });

  test("the common cases read as the issue asks; a schema's own message still wins", () => {
    const message = (schema: z.ZodType, value: unknown) => {
      const parsed = schema.safeParse(value);
      return parsed.success ? "ok" : parsed.error.issues[0]?.message;
    };
    const agent = (patch: Record<string, unknown>) => message(agentInput, { ...VALID.agent, ...patch });
    expect(agent({ ctrl_port: undefined })).toBe("必填");
    expect(agent({ ctrl_port: Number.NaN })).toBe("请输入数字");
    expect(agent({ ctrl_port: "888" })).toBe("请输入数字");
    expect(agent({ index: 1.5 })).toBe("须为整数");
    expect(agent({ index: -1 })).toBe("不能小于 0");
    expect(agent({ index: 2_000_000 })).toBe("不能大于 1000000");
    expect(agent({ name: "x".repeat(101) })).toBe("最多 100 个字符");
    expect(agent({ name: " " })).toBe("名称不能为空");
    expect(agent({ type: "vless" })).toBe("节点类型错误");
    expect(agent({ ctrl_port: 70_000 })).toBe("端口必须在 1-65535 之间");
    expect(agent({ warp: "yes" })).toBe("须为是或否");
    expect(message(z.object({ code: z.string().length(6) }), { code: "abc" })).toBe("须为 6 个字符");
    expect(message(z.string().min(6), "abc")).toBe("至少 6 个字符");
    expect(message(z.number().multipleOf(0.01), 0.001)).toBe("最多 2 位小数");
    expect(message(z.number().gt(0), 0)).toBe("须大于 0");
    expect(message(z.enum(["a", "b"]), "c")).toBe("选项无效");
    expect(message(z.string().email(), "x")).toBe("邮箱格式错误");
    expect(message(z.string().regex(/^a$/), "b")).toBe("格式错误");
    expect(
      message(
        z.number().refine(() => false),
        1,
      ),
    ).toBe("输入无效");
    expect(message(entryInput, { ...VALID.entry, ip: "bad value!" })).toBe("IP 或域名格式错误");
    expect(message(lineInput, { ...VALID.line, agentID: "abc" })).toBe("id 格式错误");
  });

  test("through the calls: the answer's message is the Chinese one", async () => {
    const cases: [path: string, payload: unknown, msg: string][] = [
      ["/api/admin/agents/update", { ...VALID.agent, zz_port: undefined }, "参数错误 zz_port: 必填"],
      ["/api/admin/agent_line/update", { ...VALID.line, num: 0 }, "参数错误 num: 数量至少为 1"],
      ["/api/admin/agent_line/update", { ...VALID.line, scale: 101 }, "参数错误 scale: 不能大于 100"],
      [
        "/api/admin/combo/update_combo",
        { ...VALID.combo, vipDuration: 1.5 },
        "参数错误 vipDuration: 须为整数",
      ],
      ["/api/admin/entrys/update", { ...VALID.entry, index: "1" }, "参数错误 index: 请输入数字"],
    ];
    for (const [path, payload, msg] of cases) {
      const answer = await admin.call(path, payload);
      expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: Code.badInput, msg });
    }
  });
});
