/**
 * The wallet and USDT withdrawals over real HTTP (seed 000 §3 Wallet, §5 withdrawal rules, §7
 * /api/wallet/*, §8 1012; seed 001 §2.7, §7 /api/admin/charge/*, §8): the address form with real
 * checksums, the whole balance taken out at request time, one open request however many race,
 * no yuan spent twice by a withdrawal and a wallet-paid order, settling / refusing / messages with
 * their notices and bot messages, the roles, and wallet = Σ wallet entries throughout.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOrder, giveWallet, makeCombo, startShopServer, walletFen } from "../../../tests/commerce.ts";
import { bindChat, outboxTexts } from "../../../tests/fakes/telegram.ts";
import { ApiClient, loggedInClient, startWithAdmin, type TestServer } from "../../../tests/harness.ts";
import { Code } from "../../rpc/codes.ts";
import type { Notice } from "../notice/schema.ts";
import type { Order } from "../order/schema.ts";
import type { Role } from "../user/schema.ts";
import {
  type AdminWallet,
  type Charge,
  type SpendEntry,
  type Wallet,
  WalletMsg,
  type Withdrawal,
} from "./schema.ts";

const TRC20 = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
const ERC20 = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const YUAN = 100;

let server: TestServer;
let admin: ApiClient;

beforeAll(async () => ({ server, admin } = await startWithAdmin(startShopServer)));
afterAll(() => server?.close());

type Customer = Awaited<ReturnType<typeof loggedInClient>>;

async function customer(fen = 0, role: Role = "channel"): Promise<Customer> {
  const who = await loggedInClient(server, { role });
  if (fen > 0) await giveWallet(server, who.user.id, fen);
  return who;
}

async function withAddress(fen: number): Promise<Customer> {
  const who = await customer(fen);
  const saved = await who.client.call("/api/wallet/change_reward_adress", {
    addressType: "USDT-TRC20",
    address: TRC20,
  });
  expect(saved.code).toBe(Code.ok);
  return who;
}

async function entriesSum(userId: string): Promise<number> {
  return (
    (
      await server.context.db.get<{ total: number | null }>(
        "SELECT SUM(change_fen) AS total FROM wallet_entries WHERE user_id = ?",
        userId,
      )
    )?.total ?? 0
  );
}

async function expectLedgerHolds(userId: string) {
  const balance = await walletFen(server, userId);
  expect(balance).toBeGreaterThanOrEqual(0);
  expect(await entriesSum(userId)).toBe(balance);
}

const withdrawalCount = async (userId: string) =>
  (
    await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM withdrawals WHERE user_id = ?",
      userId,
    )
  )?.n ?? 0;

async function request(who: Customer): Promise<Withdrawal> {
  const answer = await who.client.call<Withdrawal>("/api/wallet/make_charge");
  expect(answer.code).toBe(Code.ok);
  return answer.data;
}

async function notices(who: Customer): Promise<string[]> {
  const answer = await who.client.call<Notice[]>("/api/user_notive/list");
  return answer.data.map((n) => n.desc);
}

describe("the customer's wallet", () => {
  test("mywallet: a new account has nothing, no address, and the 500 yuan minimum", async () => {
    const who = await customer();
    const answer = await who.client.call<Wallet>("/api/wallet/mywallet");
    expect(answer).toEqual({
      code: Code.ok,
      msg: expect.any(String),
      data: { money: 0, address: "", addressType: "", min_charge_money: 500 },
    });
  });

  test("change_reward_adress stores a checksummed address of either type; mywallet shows it", async () => {
    const who = await customer(12_345);
    const trc = await who.client.call<Wallet>("/api/wallet/change_reward_adress", {
      addressType: "USDT-TRC20",
      address: ` ${TRC20} `,
    });
    expect(trc.data).toEqual({
      money: 123.45,
      address: TRC20,
      addressType: "USDT-TRC20",
      min_charge_money: 500,
    });
    const erc = await who.client.call<Wallet>("/api/wallet/change_reward_adress", {
      addressType: "USDT-ERC20",
      address: ERC20,
    });
    expect(erc.code).toBe(Code.ok);
    const mine = await who.client.call<Wallet>("/api/wallet/mywallet");
    expect(mine.data).toMatchObject({ address: ERC20, addressType: "USDT-ERC20" });
  });

  test("a wrong address is refused with its reason and the stored one stays", async () => {
    const who = await customer();
    await who.client.call("/api/wallet/change_reward_adress", { addressType: "USDT-TRC20", address: TRC20 });
    const cases: [unknown, string][] = [
      [{ addressType: "USDT-TRC20", address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6T" }, WalletMsg.badTrc20],
      [{ addressType: "USDT-TRC20", address: ERC20 }, WalletMsg.badTrc20],
      [{ addressType: "USDT-ERC20", address: ERC20.replace("aA", "Aa") }, WalletMsg.badErc20Checksum],
      [{ addressType: "USDT-ERC20", address: TRC20 }, WalletMsg.badErc20Shape],
      [{ addressType: "USDT-ERC20", address: "  " }, WalletMsg.addressEmpty],
      [{ addressType: "BTC", address: TRC20 }, WalletMsg.addressTypeEmpty],
      [{ address: TRC20 }, WalletMsg.addressTypeEmpty],
    ];
    for (const [payload, msg] of cases) {
      const answer = await who.client.call("/api/wallet/change_reward_adress", payload);
      expect(answer.code).toBe(Code.badInput);
      expect(answer.msg).toContain(msg);
    }
    const mine = await who.client.call<Wallet>("/api/wallet/mywallet");
    expect(mine.data).toMatchObject({ address: TRC20, addressType: "USDT-TRC20" });
  });

  test("make_charge without an address: 1012 请先填写并确认您的收款地址, nothing taken", async () => {
    const who = await customer(600 * YUAN);
    const answer = await who.client.call("/api/wallet/make_charge");
    expect({ code: answer.code, msg: answer.msg }).toEqual({
      code: Code.withdrawRefused,
      msg: WalletMsg.noAddress,
    });
    expect(answer.msg).toBe("请先填写并确认您的收款地址");
    expect(await walletFen(server, who.user.id)).toBe(600 * YUAN);
    expect(await withdrawalCount(who.user.id)).toBe(0);
  });

  test("make_charge below min_charge_money: 1012 申请提现失败，最低提现金额:{n}元, also with an empty wallet", async () => {
    const short = await withAddress(499_99);
    const answer = await short.client.call("/api/wallet/make_charge");
    expect({ code: answer.code, msg: answer.msg }).toEqual({
      code: Code.withdrawRefused,
      msg: "申请提现失败，最低提现金额:500元",
    });
    expect(await walletFen(server, short.user.id)).toBe(499_99);

    await server.context.settings.update({ min_charge_money: 0 });
    try {
      const empty = await withAddress(0);
      const none = await empty.client.call("/api/wallet/make_charge");
      expect({ code: none.code, msg: none.msg }).toEqual({
        code: Code.withdrawRefused,
        msg: WalletMsg.belowMinimum(0),
      });
      expect(await withdrawalCount(empty.user.id)).toBe(0);
    } finally {
      await server.context.settings.update({ min_charge_money: 500 });
    }
  });

  test("make_charge takes the whole balance with a ledger row; the lists show it, newest first", async () => {
    const who = await withAddress(612_34);
    const withdrawal = await request(who);
    expect(withdrawal).toMatchObject({
      money: 612.34,
      left: 0,
      status: "request",
      msg: "",
      paidTime: 0,
      txid: "",
      addressType: "USDT-TRC20",
      address: TRC20,
    });
    expect(await walletFen(server, who.user.id)).toBe(0);
    await expectLedgerHolds(who.user.id);

    const list = await who.client.call<Withdrawal[]>("/api/wallet/charge_list");
    expect(list.data).toEqual([withdrawal]);
    const spend = await who.client.call<SpendEntry[]>("/api/wallet/spend_list");
    expect(spend.data.map((e) => [e.spendMoney, e.left, e.type])).toEqual([
      [-612.34, 0, "withdraw"],
      [612.34, 612.34, "adjust"],
    ]);
    expect(spend.data[0]?.desc).toBe(WalletMsg.withdrawDesc(TRC20));
  });

  test("a second request while one is open is 1012 with its own message, even with new money", async () => {
    const who = await withAddress(600 * YUAN);
    await request(who);
    await giveWallet(server, who.user.id, 700 * YUAN);
    const again = await who.client.call("/api/wallet/make_charge");
    expect({ code: again.code, msg: again.msg }).toEqual({
      code: Code.withdrawRefused,
      msg: WalletMsg.alreadyOpen,
    });
    expect(await walletFen(server, who.user.id)).toBe(700 * YUAN);
    expect(await withdrawalCount(who.user.id)).toBe(1);
  });

  test("20 concurrent make_charge of one wallet create one withdrawal of the whole balance", async () => {
    const who = await withAddress(800 * YUAN);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => who.client.call<Withdrawal>("/api/wallet/make_charge")),
    );
    expect(answers.filter((a) => a.code === Code.ok).length).toBe(1);
    expect(answers.filter((a) => a.code === Code.withdrawRefused).length).toBe(19);
    expect(await withdrawalCount(who.user.id)).toBe(1);
    expect(answers.find((a) => a.code === Code.ok)?.data.money).toBe(800);
    expect(await walletFen(server, who.user.id)).toBe(0);
    await expectLedgerHolds(who.user.id);
  });

  test("a withdrawal racing a wallet-paid order never spends the same yuan twice", async () => {
    const combo = await makeCombo(server, { name: "渠道测试套餐", price: 150 });
    for (let round = 0; round < 6; round++) {
      const who = await withAddress(700 * YUAN);
      const order = await createOrder(who.client, combo._id);
      const walletCheck = () => who.client.call<Order>("/api/shop/wallet_check", { order_id: order._id });
      const makeCharge = () => who.client.call<Withdrawal>("/api/wallet/make_charge");
      // Sent in both orders across the rounds.
      const [check, charge] =
        round % 2
          ? await Promise.all([walletCheck(), makeCharge()])
          : await Promise.all([makeCharge(), walletCheck()]).then(([c, w]) => [w, c] as const);
      expect(check.code).toBe(Code.ok);
      const withdrawn = charge.code === Code.ok ? charge.data.money * YUAN : 0;
      const walletSpend = check.data.wallet_spend * YUAN;
      // Either order wins; together they never take more than the 700 yuan there were.
      expect(Math.round(withdrawn + walletSpend + (await walletFen(server, who.user.id)))).toBe(700 * YUAN);
      expect(withdrawn === 700 * YUAN || walletSpend === 150 * YUAN).toBe(true);
      await expectLedgerHolds(who.user.id);
    }
  });

  test("charge_list and spend_list show only the caller's own", async () => {
    const a = await withAddress(600 * YUAN);
    const b = await withAddress(0);
    await request(a);
    expect((await b.client.call<Withdrawal[]>("/api/wallet/charge_list")).data).toEqual([]);
    expect((await b.client.call<SpendEntry[]>("/api/wallet/spend_list")).data).toEqual([]);
    // The payload cannot name another account.
    const sneaky = await b.client.call<Withdrawal[]>("/api/wallet/charge_list", {
      uid: a.user.id,
      user_id: a.user.id,
    });
    expect(sneaky.data).toEqual([]);
    const wallet = await b.client.call<Wallet>("/api/wallet/mywallet", { uid: a.user.id });
    expect(wallet.data.money).toBe(0);
  });

  test("a visitor is sent to log in (1002) by every wallet call", async () => {
    const visitor = new ApiClient(server.url);
    for (const path of ["mywallet", "change_reward_adress", "make_charge", "charge_list", "spend_list"]) {
      const answer = await visitor.call(`/api/wallet/${path}`, { addressType: "USDT-TRC20", address: TRC20 });
      expect(answer.code).toBe(Code.notLoggedIn);
    }
  });
});

describe("/admin_charge", () => {
  test("a new request tells the admins through the bot", async () => {
    const boss = await loggedInClient(server, { role: "admin" });
    await bindChat(server, boss.user.id, 915_001);
    const who = await withAddress(543_21);
    const withdrawal = await request(who);
    expect(await outboxTexts(server, 915_001)).toContain(
      WalletMsg.requestedAdmin(who.email, "543.21", "USDT-TRC20"),
    );
    expect(withdrawal.money).toBe(543.21);
  });

  test("charge_list: every request with its email, newest first; status filter", async () => {
    const first = await withAddress(600 * YUAN);
    const second = await withAddress(601 * YUAN);
    const w1 = await request(first);
    const w2 = await request(second);
    const all = await admin.call<Charge[]>("/api/admin/charge/charge_list");
    const ids = all.data.map((c) => c._id);
    expect(ids.indexOf(w2._id)).toBeLessThan(ids.indexOf(w1._id));
    expect(all.data.find((c) => c._id === w1._id)).toMatchObject({
      uid: first.user.id,
      email: first.email,
      money: 600,
      status: "request",
      paidTime: 0,
    });
    await admin.call("/api/admin/charge/checkout_charge", { charge_id: w1._id });
    const paid = await admin.call<Charge[]>("/api/admin/charge/charge_list", { status: "paid" });
    expect(paid.data.every((c) => c.status === "paid")).toBe(true);
    expect(paid.data.map((c) => c._id)).toContain(w1._id);
    expect(paid.data.map((c) => c._id)).not.toContain(w2._id);
    const bad = await admin.call("/api/admin/charge/charge_list", { status: "done" });
    expect(bad.code).toBe(Code.badInput);
  });

  test("wallet {uid}: the payee's balance and address", async () => {
    const who = await customer(12_300);
    await who.client.call("/api/wallet/change_reward_adress", { addressType: "USDT-ERC20", address: ERC20 });
    const answer = await admin.call<AdminWallet>("/api/admin/charge/wallet", { uid: who.user.id });
    expect(answer.data).toEqual({ money: 123, addressType: "USDT-ERC20", address: ERC20 });
    const unknown = await admin.call("/api/admin/charge/wallet", { uid: "0".repeat(24) });
    expect(unknown.code).toBe(Code.notFound);
  });

  test("checkout_charge settles once with the txid; the customer sees 已结算 data, a notice and a bot message", async () => {
    const who = await withAddress(650 * YUAN);
    await bindChat(server, who.user.id, 915_002);
    const withdrawal = await request(who);
    const settled = await admin.call<Charge>("/api/admin/charge/checkout_charge", {
      charge_id: withdrawal._id,
      txid: " abc123 ",
    });
    expect(settled.code).toBe(Code.ok);
    expect(settled.data).toMatchObject({ status: "paid", txid: "abc123", money: 650 });
    expect(settled.data.paidTime).toBeGreaterThan(0);
    const mine = await who.client.call<Withdrawal[]>("/api/wallet/charge_list");
    expect(mine.data[0]).toMatchObject({ _id: withdrawal._id, status: "paid", txid: "abc123" });
    expect(await notices(who)).toContain(WalletMsg.settledNotice("650.00"));
    expect(await outboxTexts(server, 915_002)).toEqual([WalletMsg.settledNotice("650.00")]);

    for (const path of ["checkout_charge", "refuse_charge"]) {
      const again = await admin.call(`/api/admin/charge/${path}`, {
        charge_id: withdrawal._id,
        reason: "重复",
      });
      expect({ code: again.code, msg: again.msg }).toEqual({
        code: Code.withdrawRefused,
        msg: WalletMsg.notOpen("已结算"),
      });
    }
    // Settled money does not come back; the wallet still matches its entries.
    expect(await walletFen(server, who.user.id)).toBe(0);
    await expectLedgerHolds(who.user.id);
    // A new request is possible once the first is closed.
    await giveWallet(server, who.user.id, 500 * YUAN);
    expect((await request(who)).money).toBe(500);
  });

  test("refuse_charge returns the money with a withdraw_refund entry; the reason is the message", async () => {
    const who = await withAddress(720 * YUAN);
    await bindChat(server, who.user.id, 915_003);
    const withdrawal = await request(who);
    const empty = await admin.call("/api/admin/charge/refuse_charge", {
      charge_id: withdrawal._id,
      reason: " ",
    });
    expect(empty.code).toBe(Code.badInput);
    expect(empty.msg).toContain(WalletMsg.reasonEmpty);
    const refused = await admin.call<Charge>("/api/admin/charge/refuse_charge", {
      charge_id: withdrawal._id,
      reason: "地址无法收款",
    });
    expect(refused.data).toMatchObject({ status: "refused", msg: "地址无法收款", paidTime: 0 });
    expect(await walletFen(server, who.user.id)).toBe(720 * YUAN);
    await expectLedgerHolds(who.user.id);
    const spend = await who.client.call<SpendEntry[]>("/api/wallet/spend_list");
    expect(spend.data[0]).toMatchObject({ spendMoney: 720, left: 720, type: "withdraw_refund" });
    const mine = await who.client.call<Withdrawal[]>("/api/wallet/charge_list");
    expect(mine.data[0]).toMatchObject({ status: "refused", msg: "地址无法收款" });
    const text = WalletMsg.refusedNotice("720.00", "地址无法收款");
    expect(await notices(who)).toContain(text);
    expect(await outboxTexts(server, 915_003)).toEqual([text]);
    const settle = await admin.call("/api/admin/charge/checkout_charge", { charge_id: withdrawal._id });
    expect({ code: settle.code, msg: settle.msg }).toEqual({
      code: Code.withdrawRefused,
      msg: WalletMsg.notOpen("已拒绝"),
    });
    expect(await walletFen(server, who.user.id)).toBe(720 * YUAN);
  });

  test("concurrent settle and refuse of one request: exactly one wins, the money moves once", async () => {
    const who = await withAddress(900 * YUAN);
    const withdrawal = await request(who);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        admin.call(`/api/admin/charge/${i % 2 ? "checkout_charge" : "refuse_charge"}`, {
          charge_id: withdrawal._id,
          reason: "并发",
        }),
      ),
    );
    expect(answers.filter((a) => a.code === Code.ok).length).toBe(1);
    const status = (await who.client.call<Withdrawal[]>("/api/wallet/charge_list")).data[0]?.status;
    expect(await walletFen(server, who.user.id)).toBe(status === "refused" ? 900 * YUAN : 0);
    await expectLedgerHolds(who.user.id);
  });

  test("message {charge_id, msg}: the customer sees it in charge_list, whatever the status", async () => {
    const who = await withAddress(600 * YUAN);
    const withdrawal = await request(who);
    const answer = await admin.call("/api/admin/charge/message", {
      charge_id: withdrawal._id,
      msg: "今晚结算",
    });
    expect(answer.code).toBe(Code.ok);
    let mine = await who.client.call<Withdrawal[]>("/api/wallet/charge_list");
    expect(mine.data[0]?.msg).toBe("今晚结算");
    await admin.call("/api/admin/charge/checkout_charge", { charge_id: withdrawal._id });
    await admin.call("/api/admin/charge/message", { charge_id: withdrawal._id, msg: "已转账，请查收" });
    mine = await who.client.call<Withdrawal[]>("/api/wallet/charge_list");
    expect(mine.data[0]).toMatchObject({ status: "paid", msg: "已转账，请查收" });
    const empty = await admin.call("/api/admin/charge/message", { charge_id: withdrawal._id, msg: "" });
    expect(empty.code).toBe(Code.badInput);
    expect(empty.msg).toContain(WalletMsg.msgEmpty);
    const unknown = await admin.call("/api/admin/charge/message", { charge_id: "0".repeat(24), msg: "x" });
    expect({ code: unknown.code, msg: unknown.msg }).toEqual({
      code: Code.notFound,
      msg: WalletMsg.chargeNotFound,
    });
  });

  test("every /api/admin/charge/* call refuses visitor (1002), normal, channel and yunying (1003)", async () => {
    const victim = await withAddress(600 * YUAN);
    const withdrawal = await request(victim);
    const payloads: Record<string, unknown> = {
      charge_list: {},
      checkout_charge: { charge_id: withdrawal._id },
      wallet: { uid: victim.user.id },
      message: { charge_id: withdrawal._id, msg: "x" },
      refuse_charge: { charge_id: withdrawal._id, reason: "x" },
    };
    const callers: [ApiClient, number][] = [[new ApiClient(server.url), Code.notLoggedIn]];
    for (const role of ["normal", "channel", "yunying"] as const) {
      callers.push([(await loggedInClient(server, { role })).client, Code.forbidden]);
    }
    for (const [client, code] of callers) {
      for (const [path, payload] of Object.entries(payloads)) {
        const answer = await client.call(`/api/admin/charge/${path}`, payload);
        expect({ path, code: answer.code, data: answer.data }).toEqual({ path, code, data: null });
      }
    }
    const mine = await victim.client.call<Withdrawal[]>("/api/wallet/charge_list");
    expect(mine.data[0]).toMatchObject({ status: "request", msg: "" });
    expect(await walletFen(server, victim.user.id)).toBe(0);
  });
});
