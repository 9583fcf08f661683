/**
 * `ferry channel set|show`, run as real processes against the data directory of a running server:
 * what the CLI sets is what get_user_channel answers, show counts the invited and the rebates,
 * bad input is one line and changes nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Channel } from "../src/modules/channel/schema.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import { createUser } from "../src/modules/user/service.ts";
import { settleWithoutGateway } from "../src/payments/credit.ts";
import { createOrder, makeCombo, startShopServer } from "../tests/commerce.ts";
import { ApiClient, loggedInClient, type TestServer, uniqueEmail } from "../tests/harness.ts";
import { expectHelp, expectOneLineError, type FerryIn, ferry, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli(startShopServer)));
afterAll(() => server?.close());

test("every channel command has --help", async () => {
  await expectHelp([
    [["channel"], ["set", "show"]],
    [
      ["channel", "set"],
      ["--code", "--rate", "--days", "--name", "--data", "--json"],
    ],
    [
      ["channel", "show"],
      ["--data", "--json"],
    ],
  ]);
});

test("set gives a channel that the back office reads; show counts invited customers and rebates", async () => {
  const owner = await loggedInClient(server);
  const admin = (await loggedInClient(server, { role: "admin" })).client;
  const saved = await cli.json<Channel>([
    "channel",
    "set",
    owner.email,
    "--code",
    "cli001",
    "--rate",
    "0.2",
    "--days",
    "60",
    "--name",
    "论坛",
  ]);
  expect(saved).toEqual({
    email: owner.email,
    name: "论坛",
    code: "CLI001",
    rewardRate: 0.2,
    comsumerDuration: 60,
  });
  const read = await admin.call<Channel>("/api/admin/users/get_user_channel", { user_id: owner.user.id });
  expect(read.data).toEqual(saved);
  expect((await owner.client.call<{ type: string }>("/api/user/userinfo")).data.type).toBe("channel");

  // The name stays when omitted; the rate changes.
  expect(await cli.ok(["channel", "set", owner.email, "--rate", "0.5"])).toBe(
    `channel CLI001 of ${owner.email}: rate 0.5, 60 days, 论坛\n`,
  );

  const email = uniqueEmail("cli-invited");
  await createUser(server.context, {
    email,
    passwordDigest: transformPassword("correct-horse-1"),
    channelCode: "cli001",
  });
  const customer = new ApiClient(server.url);
  await customer.login(email, "correct-horse-1");
  const combo = await makeCombo(server, { name: "二十元", price: 20 });
  const order = await createOrder(customer, combo._id);
  await settleWithoutGateway(server.context, order._id, "manual", "manual: cli test");

  expect(await cli.ok(["channel", "show", owner.email])).toBe(
    [
      `channel CLI001 of ${owner.email} (论坛)`,
      "rate 0.5, orders within 60 days of sign-up earn",
      "invited 1; rebates 1, total ¥10.00; wallet ¥10.00",
      "",
    ].join("\n"),
  );
  const plain = await loggedInClient(server);
  expect(await cli.ok(["channel", "show", plain.email])).toBe(`${plain.email} has no channel\n`);
});

test("bad input is one line and changes nothing", async () => {
  const taken = await loggedInClient(server);
  await cli.ok(["channel", "set", taken.email, "--code", "TAKEN1"]);
  const other = await loggedInClient(server);
  const cases: [string[], RegExp][] = [
    [["channel", "set", other.email, "--code", "taken1"], /该渠道码已被其他渠道使用/],
    [["channel", "set", other.email, "--code", "nocode"], /系统保留/],
    [["channel", "set", other.email, "--code", "AB"], /--code: 渠道码须为6位字母或数字/],
    [["channel", "set", other.email, "--rate", "0.6"], /--rate: 返利比例须在 0 到 0.5 之间/],
    [["channel", "set", other.email, "--rate", "abc"], /--rate must be a number/],
    [["channel", "set", other.email, "--days", "1.5"], /--days/],
    [["channel", "set", "nobody@example.com"], /用户不存在/],
    [["channel", "show", "nobody@example.com"], /用户不存在/],
  ];
  const runs = await Promise.all(cases.map(([args]) => ferry(cli.withData(args))));
  cases.forEach(([, mentions], i) => {
    expectOneLineError(runs[i] as (typeof runs)[number], mentions);
  });
  const channels = await server.context.db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM channels WHERE user_id = ?",
    other.user.id,
  );
  expect(channels?.n).toBe(0);
});
