/**
 * `ferry withdraw list|settle|refuse|message`, run as real processes against the data directory
 * of a running server: requests made on the web are listed, settling and refusing act as on
 * /admin_charge (status, money back on refusal, the customer's notice), a closed request is refused.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Notice } from "../src/modules/notice/schema.ts";
import type { Charge, Withdrawal } from "../src/modules/wallet/schema.ts";
import { WalletMsg } from "../src/modules/wallet/schema.ts";
import { giveWallet, walletFen } from "../tests/commerce.ts";
import { loggedInClient, type TestServer } from "../tests/harness.ts";
import { expectHelp, expectOneLineError, type FerryIn, ferry, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli()));
afterAll(() => server?.close());

type Client = Awaited<ReturnType<typeof loggedInClient>>;

async function requester(fen: number): Promise<{ who: Client; withdrawal: Withdrawal }> {
  const who = await loggedInClient(server, { role: "channel" });
  await giveWallet(server, who.user.id, fen);
  await who.client.call("/api/wallet/change_reward_adress", {
    addressType: "USDT-TRC20",
    address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
  });
  const answer = await who.client.call<Withdrawal>("/api/wallet/make_charge");
  expect(answer.code).toBe(0);
  return { who, withdrawal: answer.data };
}

const notices = async (who: Client) =>
  (await who.client.call<Notice[]>("/api/user_notive/list")).data.map((n) => n.desc);

test("every withdraw command has --help", async () => {
  await expectHelp([
    [["withdraw"], ["list", "settle", "refuse", "message"]],
    [
      ["withdraw", "list"],
      ["--status", "request", "paid", "refused", "--json"],
    ],
    [
      ["withdraw", "settle"],
      ["<id>", "--txid"],
    ],
    [
      ["withdraw", "refuse"],
      ["<id>", "--reason"],
    ],
    [
      ["withdraw", "message"],
      ["<id>", "<text>"],
    ],
  ]);
});

test("list, settle with a txid, refuse with a reason, message: as on /admin_charge", async () => {
  expect(await cli.ok(["withdraw", "list"])).toBe("no withdrawals\n");
  const first = await requester(600_00);
  const second = await requester(750_50);

  const all = await cli.json<Charge[]>(["withdraw", "list"]);
  expect(all.map((c) => [c._id, c.email, c.status, c.money])).toEqual([
    [second.withdrawal._id, second.who.email, "request", 750.5],
    [first.withdrawal._id, first.who.email, "request", 600],
  ]);
  const text = await cli.ok(["withdraw", "list"]);
  expect(text).toContain(`${first.withdrawal._id}  request`);
  expect(text).toContain("750.50 yuan");

  expect(await cli.ok(["withdraw", "settle", first.withdrawal._id, "--txid", "0xabc"])).toContain(
    `settled withdrawal ${first.withdrawal._id}: 600.00 yuan to ${first.who.email}`,
  );
  const mine = (await first.who.client.call<Withdrawal[]>("/api/wallet/charge_list")).data[0];
  expect(mine).toMatchObject({ status: "paid", txid: "0xabc" });
  expect(await notices(first.who)).toContain(WalletMsg.settledNotice("600.00"));

  await cli.ok(["withdraw", "refuse", second.withdrawal._id, "--reason", "地址有误"]);
  expect(await walletFen(server, second.who.user.id)).toBe(750_50);
  expect(await notices(second.who)).toContain(WalletMsg.refusedNotice("750.50", "地址有误"));

  await cli.ok(["withdraw", "message", first.withdrawal._id, "已打款"]);
  expect((await first.who.client.call<Withdrawal[]>("/api/wallet/charge_list")).data[0]?.msg).toBe("已打款");

  expect((await cli.json<Charge[]>(["withdraw", "list", "--status", "paid"])).map((c) => c._id)).toEqual([
    first.withdrawal._id,
  ]);
  expect((await cli.json<Charge[]>(["withdraw", "list", "--status", "request"])).map((c) => c._id)).toEqual(
    [],
  );
});

test("refusals: closed, unknown, malformed ids, missing reason, bad status — one line, nothing changed", async () => {
  const { who, withdrawal } = await requester(500_00);
  await cli.ok(["withdraw", "settle", withdrawal._id]);
  const cases: [string[], RegExp][] = [
    [["withdraw", "settle", withdrawal._id], /already settled/],
    [["withdraw", "refuse", withdrawal._id, "--reason", "x"], /already settled/],
    [["withdraw", "settle", "0".repeat(24)], /no withdrawal 0{24}/],
    [["withdraw", "message", "0".repeat(24), "x"], /no withdrawal/],
    [["withdraw", "settle", "nope"], /not a withdrawal id: nope/],
    [["withdraw", "refuse", withdrawal._id], /--reason/],
    [["withdraw", "refuse", withdrawal._id, "--reason", " "], /--reason/],
    [["withdraw", "list", "--status", "done"], /done/],
  ];
  const runs = await Promise.all(cases.map(([args]) => ferry(cli.withData(args))));
  cases.forEach(([, mentions], i) => {
    expectOneLineError(runs[i] as (typeof runs)[number], mentions);
  });
  expect(await walletFen(server, who.user.id)).toBe(0);
});
