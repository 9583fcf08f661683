/**
 * The guide catalog against the routes and the texts: every guide route of web/routes.ts has a
 * catalog entry, a text and a subscribe client, and nothing else does; file paths are ones the
 * server will serve; the details seed 000 §2 keeps are in the texts.
 */
import { describe, expect, test } from "bun:test";
import { GUIDES } from "../../src/modules/guide/catalog.ts";
import { isGuidePath } from "../../src/modules/guide/files.ts";
import { TEST_URL } from "../../src/subscription/rules.ts";
import { ROUTES } from "../routes.ts";
import { GUIDE_CONTENT_ROUTES, guideContent, STEP_TITLES } from "./content.ts";

const guideRoutes = Object.keys(ROUTES).filter((route) => ROUTES[route]?.guide);
const textOf = (route: string) => JSON.stringify(guideContent(route));
const versionOf = (route: string) => GUIDES.find((guide) => guide.route === route)?.version;

describe("guide catalog", () => {
  test("the 17 guide routes of seed 000 §2, each with one catalog entry, a text and a subscribe client", () => {
    expect(guideRoutes).toHaveLength(17);
    expect(GUIDES.map((guide) => guide.route).sort()).toEqual([...guideRoutes].sort());
    expect([...GUIDE_CONTENT_ROUTES].sort()).toEqual([...guideRoutes].sort());
    expect(new Set(GUIDES.map((guide) => guide.route)).size).toBe(GUIDES.length);
    for (const route of guideRoutes) expect(guideContent(route)?.subscribe.key).toBeString();
    expect(STEP_TITLES).toEqual(["安装客户端", "一键导入订阅", "手动导入订阅", "启动代理", "其他说明"]);
  });

  test("file paths are servable catalog paths, unique, https official pages", () => {
    const paths = GUIDES.flatMap((guide) => guide.files.map((file) => file.path));
    expect(new Set(paths).size).toBe(paths.length);
    for (const path of paths) expect(isGuidePath(path)).toBe(true);
    for (const guide of GUIDES) {
      expect(guide.officialUrl).toStartWith("https://");
      for (const file of guide.files) expect(file.path.startsWith(`${guide.route.slice(1)}/`)).toBe(true);
    }
  });

  test("the seed's details: versions, Android 7.0, 64-bit, v2rayN 7.0.0, the 204 URL, 1440 minutes", () => {
    expect(versionOf("/flclash_for_android")).toBe("0.8.59（APK 0.8.66）");
    expect(versionOf("/flclash_for_pc")).toBe("0.8.59");
    expect(versionOf("/clash_for_windows")).toBe("0.20.39");
    expect(versionOf("/clash_for_android")).toBe("2.1.5");
    expect(versionOf("/clash_for_macos")).toBe("1.40.0");
    expect(versionOf("/v2rayng_for_android")).toBe("1.6.20");
    expect(versionOf("/clash_meta_for_android")).toBe("2.10.4");
    expect(versionOf("/singbox_for_android")).toBe("0.8.59");
    for (const guide of GUIDES.filter((entry) => entry.platform === "Android"))
      expect(guideContent(guide.route)?.requirement).toContain("Android 7.0 或更高");
    expect(guideContent("/clash_for_windows")?.requirement).toContain("64 位");
    expect(guideContent("/v2rayng_for_windows")?.requirement).toContain("7.0.0 或更新");
    for (const route of ["/flclash_for_android", "/flclash_for_pc"])
      expect(textOf(route)).toContain(TEST_URL);
    expect(TEST_URL).toBe("http://www.gstatic.com/generate_204");
    for (const route of [
      "/clash_for_windows",
      "/flclash_for_pc",
      "/singbox_for_android",
      "/v2rayng_for_windows",
    ])
      expect(textOf(route)).toContain("1440 分钟");
    expect(textOf("/quantumultx_for_ios")).toContain("172800 秒");
    expect(textOf("/quantumultx_for_ios")).toContain("2592000 秒");
    expect(guideContent("/streisand_for_ios")?.routeImport).toBe(true);
    expect(guideContent("/ss_for_ios")?.ruleFile).toBe(true);
  });
});
