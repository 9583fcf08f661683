/**
 * `ferry prize list`: the lucky-draw prize table with the statistics of the back office's prize
 * manager (seed 001 §2.15), from the same service.
 */
import type { Command } from "commander";
import { formatTraffic } from "../src/lib/traffic.ts";
import type { Prize, PrizeList } from "../src/modules/prize/schema.ts";
import { listPrizes } from "../src/modules/prize/service.ts";
import { dataOption, printJsonOr, withContext } from "./shared.ts";

const prizeLine = (p: Prize) =>
  [
    p._id,
    p.name,
    p.gainTraffic > 0 ? `${p.gainTraffic} G` : "-",
    p.gainVipTime > 0 ? `${p.gainVipTime} days` : "-",
    p.hasDiscountCoupon ? `coupon ×${p.discountValue} for ${p.discountDuration} days` : "",
    `weight ${p.weight}`,
    p.photoUrl ? "image" : "",
  ]
    .filter(Boolean)
    .join("  ");

const statsLine = ({ stats }: PrizeList) =>
  `total weight ${stats.totalWeight}  traffic × weight ${stats.trafficWeightG} G  ` +
  `expected per draw ${formatTraffic(stats.expectedTraffic)}  win rate ${stats.winRate}`;

export function registerPrizeCommands(program: Command) {
  const prize = program.command("prize").description("lucky-draw prizes");
  prize
    .command("list")
    .description(
      "list the prizes with total weight, Σ traffic × weight, the traffic one draw gives on average " +
        "and the win rate (share of the weight on prizes that give something)",
    )
    .addOption(dataOption())
    .option("--json", "print {prizes, stats} as JSON")
    .action(async (options: { data?: string; json?: boolean }) => {
      const list = await withContext(options.data, listPrizes);
      printJsonOr(options.json ?? false, list, (l) =>
        [...(l.prizes.length ? l.prizes.map(prizeLine) : ["no prizes"]), statsLine(l)].join("\n"),
      );
    });
}
