/**
 * `ferry user devices` and `ferry user set-devices` (issue 29), run as real processes against the
 * data directory of a running server: the list (text and the --json array), removing one and
 * every device, and the per-customer limit with --auto back to the packages' limit.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Device, DeviceLimit } from "../src/modules/device/schema.ts";
import { admitDevice } from "../src/modules/device/service.ts";
import { loggedInClient, type TestServer } from "../tests/harness.ts";
import { expectHelp, expectRefused, type FerryIn, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli()));
afterAll(() => server?.close());

/** A device fetching the account's subscription, as the route records it. */
async function fetchedBy(userId: string, hwid: string, at: number) {
  const details = {
    platform: "Android",
    osVersion: "14",
    model: "Pixel 8",
    userAgent: "v2RayTun/5.0",
    ip: "198.51.100.7",
  };
  await admitDevice(server.context, userId, hwid, () => details, at);
}

test("both commands have --help", async () => {
  await expectHelp([
    [["user"], ["devices", "set-devices"]],
    [
      ["user", "devices"],
      ["<email>", "--json", "--remove", "--remove-all"],
    ],
    [
      ["user", "set-devices"],
      ["<email>", "[n]", "--auto"],
    ],
  ]);
});

test("devices lists an account's devices; --json is the array of devices; --remove and --remove-all remove", async () => {
  const { user, email } = await loggedInClient(server);
  await fetchedBy(user.id, "phone-1", 1_750_000_000_000);
  await fetchedBy(user.id, "tablet-2", 1_750_000_100_000);

  const text = await cli.ok(["user", "devices", email]);
  expect(text).toContain(`${email}: 2 device(s), limit unlimited (from packages)`);
  expect(text).toContain("tablet-2");
  expect(text).toContain("198.51.100.7");

  const listed = await cli.json<Device[]>(["user", "devices", email]);
  expect(listed).toEqual([
    {
      hwid: "tablet-2",
      platform: "Android",
      osVersion: "14",
      model: "Pixel 8",
      userAgent: "v2RayTun/5.0",
      firstSeen: 1_750_000_100_000,
      lastSeen: 1_750_000_100_000,
    },
    {
      hwid: "phone-1",
      platform: "Android",
      osVersion: "14",
      model: "Pixel 8",
      userAgent: "v2RayTun/5.0",
      firstSeen: 1_750_000_000_000,
      lastSeen: 1_750_000_000_000,
    },
  ]);

  expect(await cli.ok(["user", "devices", email, "--remove", "phone-1"])).toContain("removed device phone-1");
  expect((await cli.json<Device[]>(["user", "devices", email])).map((d) => d.hwid)).toEqual(["tablet-2"]);
  expect(await cli.ok(["user", "devices", email, "--remove-all"])).toContain("removed 1 device(s)");
  expect(await cli.json<Device[]>(["user", "devices", email])).toEqual([]);
});

test("set-devices sets the account's limit, 0 is unlimited, --auto goes back to the packages'", async () => {
  const { email } = await loggedInClient(server);
  expect(await cli.json<DeviceLimit>(["user", "set-devices", email, "3"])).toEqual({
    limit: 3,
    override: 3,
    fromPackages: 0,
  });
  expect(await cli.ok(["user", "devices", email])).toContain("limit 3 (set for this account)");
  expect(await cli.json<DeviceLimit>(["user", "set-devices", email, "0"])).toMatchObject({
    limit: 0,
    override: 0,
  });
  expect(await cli.ok(["user", "set-devices", email, "--auto"])).toContain(
    "device limit from packages, now unlimited",
  );
});

test("wrong input is refused with one line", async () => {
  const { email } = await loggedInClient(server);
  const data = ["--data", server.dataDir];
  await expectRefused([
    [["user", "set-devices", email, "65", ...data], /0 to 64/],
    [["user", "set-devices", email, "-1", ...data], /0 to 64|unknown option/],
    [["user", "set-devices", email, ...data], /--auto/],
    [["user", "set-devices", email, "2", "--auto", ...data], /not both/],
    [["user", "devices", email, "--remove", "x", "--remove-all", ...data], /not both/],
    [["user", "devices", email, "--remove", "no-such-device", ...data], /设备不存在/],
    [["user", "devices", "nobody@example.com", ...data], /用户不存在/],
  ]);
});
