/**
 * `ferry guide list`, run as a real process: each guide's expected files in `<data>/guide/`,
 * present with their size or missing, and the folder to put them in.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { GUIDES } from "../src/modules/guide/catalog.ts";
import type { GuideListing } from "./guide.ts";
import { expectHelp, type FerryIn, ferryIn } from "./test-helpers.ts";

let dataDir: string;
let cli: FerryIn;
const [withInstaller] = GUIDES.filter((g) => g.files.some((f) => f.kind === "installer"));
const installer = withInstaller?.files.find((f) => f.kind === "installer");

beforeAll(() => {
  dataDir = realpathSync(mkdtempSync(join(tmpdir(), "ferry-guide-cli-")));
  cli = ferryIn(dataDir);
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("guide list has --help", async () => {
  await expectHelp([
    [["guide"], ["list"]],
    [
      ["guide", "list"],
      ["--data", "--json"],
    ],
  ]);
});

test("lists every guide's files as missing, then the one put in the folder as present with its size", async () => {
  if (!withInstaller || !installer) throw new Error("the catalog has no installer");
  const folder = join(dataDir, "guide");
  const before = await cli.json<GuideListing>(["guide", "list"]);
  expect(before.folder).toBe(folder);
  expect(before.guides.map((g) => g.route)).toEqual(GUIDES.map((g) => g.route));
  expect(before.guides.flatMap((g) => g.files).every((f) => !f.present && f.size === 0)).toBe(true);

  mkdirSync(dirname(join(folder, installer.path)), { recursive: true });
  writeFileSync(join(folder, installer.path), "x".repeat(1234));
  writeFileSync(join(folder, "not-in-catalog.exe"), "ignored");

  const after = await cli.json<GuideListing>(["guide", "list"]);
  const files = after.guides.find((g) => g.route === withInstaller.route)?.files ?? [];
  expect(files.map((f) => [f.path, f.present, f.size])).toEqual(
    withInstaller.files.map((f) => [f.path, f === installer, f === installer ? 1234 : 0]),
  );
  expect(JSON.stringify(after)).not.toContain("not-in-catalog");

  const text = await cli.ok(["guide", "list"]);
  expect(text).toStartWith(`put the files in ${folder}/`);
  expect(text).toContain(`${withInstaller.route}  ${withInstaller.client} (${withInstaller.platform})`);
  expect(text).toContain(`  ${installer.path}  installer  present  1234 bytes\n`);
  const image = withInstaller.files.find((f) => f.kind === "image");
  expect(text).toContain(`  ${image?.path}  image  missing\n`);
});
