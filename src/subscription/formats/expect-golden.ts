/**
 * Golden-file comparison for rendered subscription files. With UPDATE_GOLDEN=1 in the environment
 * the file is (re)written from the output instead; review the diff before committing it.
 */
import { expect } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const GOLDEN_DIR = join(import.meta.dir, "golden");

export function expectGolden(fileName: string, actual: string): void {
  const path = join(GOLDEN_DIR, fileName);
  if (process.env.UPDATE_GOLDEN === "1") {
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path))
    throw new Error(`golden/${fileName} is missing: run with UPDATE_GOLDEN=1 to create it`);
  expect(actual).toBe(readFileSync(path, "utf8"));
}
