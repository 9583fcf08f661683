/**
 * `ferry user devices` and `ferry user set-devices` (issue 29): an account's devices, removing
 * them, and the per-customer device limit; the same services as 用户管理.
 */
import type { Command } from "commander";
import { type Device, MAX_DEVICES } from "../src/modules/device/schema.ts";
import { listDevices, removeDevicesAsStaff, setDeviceLimit } from "../src/modules/device/service.ts";
import { requireUserByEmail } from "../src/modules/user/admin.ts";
import {
  dataOption,
  die,
  type PrintTime,
  printJsonOr,
  textTable,
  timePrinter,
  withContext,
} from "./shared.ts";

const limitText = (limit: number) => (limit > 0 ? String(limit) : "unlimited");

/** The JSON shape of `ferry user devices --json`: exactly these keys, one object per device. */
const deviceJson = (device: Device): Device => ({
  hwid: device.hwid,
  platform: device.platform,
  osVersion: device.osVersion,
  model: device.model,
  userAgent: device.userAgent,
  firstSeen: device.firstSeen,
  lastSeen: device.lastSeen,
});

function deviceTable(devices: (Device & { lastIp: string })[], at: PrintTime): string {
  const dash = (text: string) => text || "-";
  return textTable([
    ["HWID", "PLATFORM", "OS", "MODEL", "LAST SEEN", "LAST IP", "CLIENT"],
    ...devices.map((d) => [
      d.hwid,
      dash(d.platform),
      dash(d.osVersion),
      dash(d.model),
      at(d.lastSeen),
      dash(d.lastIp),
      dash(d.userAgent),
    ]),
  ]);
}

function parseLimit(value: string | undefined, auto: boolean): number | null {
  if (auto) {
    if (value !== undefined) die("give either <n> or --auto, not both");
    return null;
  }
  if (value === undefined) die("give the limit <n> (0 = unlimited) or --auto");
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > MAX_DEVICES)
    die(`<n> must be a whole number from 0 to ${MAX_DEVICES}: ${value}`);
  return n;
}

export function registerDeviceCommands(user: Command) {
  user
    .command("devices")
    .description(
      "an account's devices (the device ids its client apps sent with subscription fetches) and its device limit; " +
        "--remove <hwid> removes one, --remove-all every one",
    )
    .argument("<email>", "the account's e-mail")
    .option("--remove <hwid>", "remove this device")
    .option("--remove-all", "remove every device of the account")
    .addOption(dataOption())
    .option("--json", "print the devices as a JSON array")
    .action(
      async (
        email: string,
        options: { remove?: string; removeAll?: boolean; data?: string; json?: boolean },
      ) => {
        if (options.remove !== undefined && options.removeAll)
          die("give --remove <hwid> or --remove-all, not both");
        await withContext(options.data, async (ctx) => {
          const account = await requireUserByEmail(ctx, email);
          if (options.remove !== undefined) {
            await removeDevicesAsStaff(ctx, account.id, options.remove);
            if (!options.json) console.log(`removed device ${options.remove} of ${account.email}`);
          } else if (options.removeAll) {
            const removed = await removeDevicesAsStaff(ctx, account.id, null);
            if (!options.json) console.log(`removed ${removed} device(s) of ${account.email}`);
          }
          const list = await listDevices(ctx, account.id, { maskAddresses: false });
          if (options.json) {
            printJsonOr(true, list.devices.map(deviceJson), () => "");
            return;
          }
          if (options.remove !== undefined || options.removeAll) return;
          const at = await timePrinter(ctx);
          const source = list.override === null ? "from packages" : "set for this account";
          console.log(
            `${account.email}: ${list.devices.length} device(s), limit ${limitText(list.limit)} (${source})`,
          );
          if (list.devices.length > 0) console.log(deviceTable(list.devices, at));
        });
      },
    );

  user
    .command("set-devices")
    .description(
      `set an account's device limit: <n> from 0 (unlimited) to ${MAX_DEVICES}; --auto goes back to the largest ` +
        "device count of the packages it holds",
    )
    .argument("<email>", "the account's e-mail")
    .argument("[n]", "the limit; 0 = unlimited")
    .option("--auto", "no limit of its own: the packages' limit")
    .addOption(dataOption())
    .option("--json", "print the limit as JSON")
    .action(
      async (
        email: string,
        value: string | undefined,
        options: { auto?: boolean; data?: string; json?: boolean },
      ) => {
        const wanted = parseLimit(value, options.auto ?? false);
        await withContext(options.data, async (ctx) => {
          const account = await requireUserByEmail(ctx, email);
          const limit = await setDeviceLimit(ctx, account.id, wanted);
          printJsonOr(options.json ?? false, limit, (l) =>
            l.override === null
              ? `${account.email}: device limit from packages, now ${limitText(l.limit)}`
              : `${account.email}: device limit ${limitText(l.limit)}`,
          );
        });
      },
    );
}
