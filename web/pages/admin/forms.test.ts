/**
 * The back-office forms' rules without a browser (issue 12): a new node's draft holds its type's
 * defaults for every port and passes the server's agentInput with a name and an IP alone; a type
 * change still sets only what seed 001 §2.3.1 names; the SPA's checks give the server's Chinese
 * messages per field, keyed by the form's own field names.
 */
import { describe, expect, test } from "bun:test";
// What the bundle runs first (scripts/build-web.ts): it installs the Chinese messages.
import "../../no-eval.ts";
import { comboInput } from "../../../src/modules/combo/schema.ts";
import { FIX_NAME_REFUSAL } from "../../../src/modules/line/schema.ts";
import {
  agentInput,
  NODE_TYPES,
  newNodeDefaults,
  typeDefaults,
} from "../../../src/modules/node-record/schema.ts";
import { settingsPatchSchema, settingsSchema } from "../../../src/modules/settings/schema.ts";
import { schemaErrors } from "../../components/admin/formErrors.ts";
import { draftToLine, lineErrors, newLineDraft } from "./AgentLines.tsx";
import { draftToAgent, newAgentDraft, withType } from "./Agents.tsx";
import { draftToCombo, newComboDraft } from "./Combos.tsx";
import { changedSettings } from "./Config.tsx";

const PORT_KEYS = ["ctrl_port", "zz_port", "port", "public_port"] as const;

describe("a new node's defaults", () => {
  test("every type: the seed's named defaults, and every port filled", () => {
    expect(newNodeDefaults("v2ray")).toEqual({
      ctrl_port: 888,
      zz_port: 20000,
      port: 10000,
      public_port: 10000,
      serverType: "ubuntu_x86",
    });
    expect(newNodeDefaults("h2")).toEqual({
      ctrl_port: 999,
      zz_port: 443,
      port: 10000,
      public_port: 10000,
      serverType: "ubuntu_x86",
    });
    expect(newNodeDefaults("reality")).toEqual({
      ctrl_port: 888,
      zz_port: 443,
      port: 443,
      public_port: 443,
      serverType: "ubuntu_reality",
    });
    for (const type of NODE_TYPES) expect(newNodeDefaults(type)).toMatchObject(typeDefaults(type));
  });

  test("the form's new node saves with a name and an IP alone (Reality also needs its SNI)", () => {
    for (const type of NODE_TYPES) {
      const draft = { ...newAgentDraft(type), name: "新节点", ip: "203.0.113.1" };
      if (type === "reality") draft.host = "www.example.com";
      const agent = draftToAgent(draft);
      expect({ type, errors: schemaErrors(agentInput, agent) }).toEqual({ type, errors: {} });
      expect(agent).toMatchObject(newNodeDefaults(type));
    }
    expect(newAgentDraft().type).toBe("v2ray");
  });

  test("a type change sets only the fields its type names (seed 001 §2.3.1)", () => {
    const typed = { ...newAgentDraft(), port: "12345", public_port: "23456", zz_port: "34567" };
    const h2 = withType(typed, "h2");
    expect([h2.ctrl_port, h2.zz_port, h2.port, h2.public_port, h2.serverType]).toEqual([
      "999",
      "443",
      "12345",
      "23456",
      "ubuntu_x86",
    ]);
    const back = withType(h2, "v2ray");
    expect(PORT_KEYS.map((key) => back[key])).toEqual(["888", "443", "12345", "23456"]);
  });

  test("a port left blank is 请输入数字 on its field; a blank name gets the schema's own message", () => {
    const draft = { ...newAgentDraft(), name: "", ip: "203.0.113.1", zz_port: "" };
    expect(schemaErrors(agentInput, draftToAgent(draft), { country: "countryCode" })).toEqual({
      name: "名称不能为空",
      zz_port: "请输入数字",
    });
  });
});

describe("field errors from the server's schemas", () => {
  test("settings: 汇率 0 and a number field left blank, on their own fields", () => {
    const loaded = settingsSchema.parse({});
    const draft: Record<string, string | boolean> = {};
    for (const [key, value] of Object.entries(loaded)) {
      draft[key] = typeof value === "boolean" ? value : Array.isArray(value) ? "" : String(value);
    }
    draft.exchange_rate = "0";
    draft.usdtCheckTime = "";
    draft.notice_title = "公告";
    const patch = changedSettings(loaded, draft);
    expect(Object.keys(patch).sort()).toEqual(["exchange_rate", "notice_title", "usdtCheckTime"]);
    expect(schemaErrors(settingsPatchSchema, patch)).toEqual({
      exchange_rate: "不能小于 0.01",
      usdtCheckTime: "请输入数字",
    });
  });

  test("combo: traffic and quota reported on the fields typed in G; price decimals", () => {
    const combo = draftToCombo({
      ...newComboDraft(),
      name: "套餐",
      trafficG: "",
      limitG: "-1",
      price: "1.234",
    });
    const errors = schemaErrors(comboInput, combo, { traffic: "trafficG", limit: "limitG" });
    expect(errors).toEqual({ price: "金额最多两位小数", trafficG: "请输入数字", limitG: "不能小于 0" });
  });

  test("line: no node, no entry, a fixed name twice, each on its field", () => {
    const line = draftToLine({ ...newLineDraft(undefined, true), name: "线路", fixName: true, num: "2" });
    expect(lineErrors(line)).toEqual({
      agentID: "请选择节点",
      num: FIX_NAME_REFUSAL,
      entryID: "中转线路需要选择入口",
    });
  });
});
