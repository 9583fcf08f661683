/**
 * `ferry guide list`: which installers and images each client guide expects in `<data>/guide/`
 * and which are there (issue 17 §3). A guide shows a download button for a present file and the
 * client's official page otherwise.
 */
import type { Command } from "commander";
import { GuideFiles, type GuideStatus } from "../src/modules/guide/files.ts";
import { dataOption, printJsonOr, withContext } from "./shared.ts";

export interface GuideListing {
  /** Where the operator puts the files (absolute). */
  folder: string;
  guides: GuideStatus[];
}

function listingText({ folder, guides }: GuideListing): string {
  const lines = [`put the files in ${folder}/ (names as listed)`];
  for (const guide of guides) {
    lines.push("", `${guide.route}  ${guide.client} (${guide.platform})`);
    if (guide.files.length === 0) lines.push("  no files");
    for (const file of guide.files) {
      const state = file.present ? `present  ${file.size} bytes` : "missing";
      lines.push(`  ${file.path}  ${file.kind}  ${state}`);
    }
  }
  return lines.join("\n");
}

export function registerGuideCommands(program: Command) {
  const guide = program.command("guide").description("client guide files (installers, step images)");

  guide
    .command("list")
    .description("each guide's files in <data>/guide/ and whether each is present")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { data?: string; json?: boolean }) => {
      const listing = await withContext(options.data, (ctx) => ({
        folder: ctx.guideDir,
        guides: new GuideFiles(ctx.guideDir).status(),
      }));
      printJsonOr(options.json ?? false, listing, listingText);
    });
}
