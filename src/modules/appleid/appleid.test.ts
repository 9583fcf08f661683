/**
 * The shared Apple ID link over real HTTP (seed 000 §5, §6, §8): only a logged-in paying customer
 * is given the link the operator set; a visitor gets 1002, an unpaid customer the seed's refusal,
 * and with no link set everyone logged in hears that the service is not open. The customer becomes
 * paying the real way: an order paid through the sandbox gateway.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOrder, makeCombo, payWithSandbox, startShopServer } from "../../../tests/commerce.ts";
import { ApiClient, loggedInClient, type TestServer } from "../../../tests/harness.ts";
import { Code } from "../../rpc/codes.ts";
import type { HostInfo } from "../settings/schema.ts";
import { APPLE_ID_SHARE_CALL, AppleIdMsg, type AppleIdShareLink } from "./schema.ts";

const SHARE_URL = "https://share.example.com/apple-ids";

let server: TestServer;
let unpaid: Awaited<ReturnType<typeof loggedInClient>>;
let paid: Awaited<ReturnType<typeof loggedInClient>>;

beforeAll(async () => {
  server = await startShopServer();
  await server.context.settings.update({ apple_id_share_url: SHARE_URL });
  unpaid = await loggedInClient(server);
  paid = await loggedInClient(server);
  const combo = await makeCombo(server, { name: "1G", price: 1, traffic: 1024 ** 3 });
  const order = await createOrder(paid.client, combo._id);
  await payWithSandbox(server, paid.client, order._id);
});
afterAll(async () => {
  await server?.close();
});

describe(APPLE_ID_SHARE_CALL, () => {
  test("a visitor is asked to log in and gets no link", async () => {
    const answer = await new ApiClient(server.url).call(APPLE_ID_SHARE_CALL);
    expect(answer.code).toBe(Code.notLoggedIn);
    expect(answer.data).toBeNull();
    expect(JSON.stringify(answer)).not.toContain("share.example.com");
  });

  test("a customer who has never paid is refused with the seed's message and no link", async () => {
    const answer = await unpaid.client.call(APPLE_ID_SHARE_CALL);
    expect(answer).toEqual({ code: Code.forbidden, data: null, msg: AppleIdMsg.notPaid });
    expect(AppleIdMsg.notPaid).toBe("共享账号仅对付费用户开放，请先购买任意商品");
  });

  test("a paying customer gets the link the operator set", async () => {
    const answer = await paid.client.call<AppleIdShareLink>(APPLE_ID_SHARE_CALL);
    expect(answer.code).toBe(Code.ok);
    expect(answer.data).toEqual({ url: SHARE_URL });
  });

  test("the check is made at call time: the link follows the setting as it is now", async () => {
    await server.context.settings.update({ apple_id_share_url: "https://ids.example.org/list" });
    const answer = await paid.client.call<AppleIdShareLink>(APPLE_ID_SHARE_CALL);
    expect(answer.data).toEqual({ url: "https://ids.example.org/list" });
    await server.context.settings.update({ apple_id_share_url: SHARE_URL });
  });

  test("with no link set the service is not open, for paying and unpaid customers alike", async () => {
    await server.context.settings.update({ apple_id_share_url: "" });
    try {
      for (const who of [paid, unpaid]) {
        const answer = await who.client.call(APPLE_ID_SHARE_CALL);
        expect(answer).toEqual({ code: Code.notFound, data: null, msg: AppleIdMsg.notOpen });
      }
      const host = await new ApiClient(server.url).call<{ appleIdShareOpen: boolean }>("/api/host/get");
      expect(host.data.appleIdShareOpen).toBe(false);
    } finally {
      await server.context.settings.update({ apple_id_share_url: SHARE_URL });
    }
  });

  test("the public host info says whether sharing is open but never carries the link", async () => {
    const raw = await new ApiClient(server.url).call<{ appleIdShareOpen: boolean }>("/api/host/get");
    expect(raw.data.appleIdShareOpen).toBe(true);
    expect(JSON.stringify(raw)).not.toContain("share.example.com");
  });

  test("the setting takes only an http(s) address", async () => {
    const admin = await loggedInClient(server, { role: "admin" });
    const bad = await admin.client.call("/api/admin/config/set_config", {
      apple_id_share_url: "javascript:alert(1)",
    });
    expect(bad.code).toBe(Code.badInput);
    const good = await admin.client.call<{ apple_id_share_url: string }>("/api/admin/config/set_config", {
      apple_id_share_url: SHARE_URL,
    });
    expect(good.data.apple_id_share_url).toBe(SHARE_URL);
  });
});

describe("/api/host/get: the Quantumult X list settings reach the SPA's import button", () => {
  test("empty by default, then the operator's addresses; only http(s) is accepted", async () => {
    const visitor = new ApiClient(server.url);
    const before = await visitor.call<HostInfo>("/api/host/get");
    expect([before.data.qx_filter_url, before.data.qx_rewrite_url]).toEqual(["", ""]);

    const admin = await loggedInClient(server, { role: "admin" });
    const lists = {
      qx_filter_url: "https://rules.example.net/qx/filter.list",
      qx_rewrite_url: "https://rules.example.net/qx/rewrite.conf",
    };
    expect((await admin.client.call("/api/admin/config/set_config", lists)).code).toBe(Code.ok);
    const after = await visitor.call<HostInfo>("/api/host/get");
    expect([after.data.qx_filter_url, after.data.qx_rewrite_url]).toEqual([
      lists.qx_filter_url,
      lists.qx_rewrite_url,
    ]);
    const bad = await admin.client.call("/api/admin/config/set_config", {
      qx_filter_url: "ftp://x.example/f",
    });
    expect(bad.code).toBe(Code.badInput);
  });
});
