/**
 * A fake 彩虹易支付 (EPay v1) merchant gateway on 127.0.0.1, speaking its wire formats
 * (payments.md §2): `POST mapi.php` (form-encoded, MD5-signed) answering JSON with a qrcode or
 * payurl, `GET api.php?act=order` (key in the query), and notifications SENT the way 彩虹 sends
 * them: a GET to notify_url with the signed parameters appended, money cast like a PHP float.
 * The sign is computed here independently of the production code.
 */
import { createHash } from "node:crypto";

export const EPAY_TEST_PID = "1001";
export const EPAY_TEST_KEY = "K7sD2mQ9vX4pL8nR3tY6wZ1aB5cE0fGh";

/** payments.md §2 sign, written out again so the fake does not trust the code under test. */
export function gatewaySign(params: Record<string, string>, key: string): string {
  const text = Object.keys(params)
    .filter((k) => k !== "sign" && k !== "sign_type" && params[k] !== "")
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join("&");
  return createHash("md5").update(`${text}${key}`, "utf8").digest("hex");
}

/** PHP `(float)"15.00"` printed back: "15", "15.5", "0.01". */
export function phpFloat(money: string): string {
  return money.includes(".") ? money.replace(/0+$/, "").replace(/\.$/, "") : money;
}

export interface MapiRequest {
  params: Record<string, string>;
  signValid: boolean;
  contentType: string;
}

export interface EpayOrder {
  tradeNo: string;
  outTradeNo: string;
  type: string;
  name: string;
  money: string;
  notifyUrl: string;
  returnUrl: string;
  param: string;
  addtime: string;
  endtime: string;
  status: 0 | 1;
}

/** What mapi.php answers with: a QR content, a cashier URL, an app scheme, or a refusal. */
export type MapiMode = "qrcode" | "payurl" | "urlscheme" | { code: number; msg: string };

export interface NotifyDelivery {
  url: string;
  status: number;
  body: string;
}

export interface FakeEpayGateway {
  /** Base URL for the setting epay_url, ending with "/". */
  url: string;
  pid: string;
  key: string;
  mapiRequests: MapiRequest[];
  queryRequests: URLSearchParams[];
  orders: Map<string, EpayOrder>;
  mode: MapiMode;
  /** How long mapi.php takes to answer a create request (a slow gateway); 0 by default. */
  delayMs: number;
  /** The customer pays: the order becomes status 1 (what api.php then reports). */
  pay(outTradeNo: string): EpayOrder;
  /** The signed parameters 彩虹 sends for a paid order, with optional overrides (re-signed). */
  notification(outTradeNo: string, overrides?: Record<string, string>): Record<string, string>;
  /** Sends one notification for a paid order exactly as 彩虹 does and returns what the panel answered. */
  notify(outTradeNo: string, overrides?: Record<string, string>): Promise<NotifyDelivery>;
  /** Sends arbitrary (already signed or deliberately broken) parameters to a notify URL. */
  send(notifyUrl: string, params: Record<string, string>): Promise<NotifyDelivery>;
  close(): Promise<void>;
}

const json = (body: unknown) =>
  new Response(JSON.stringify(body), { headers: { "content-type": "application/json; charset=utf-8" } });

const phpDate = (time = Date.now()) =>
  new Date(time + 8 * 3600_000).toISOString().replace("T", " ").slice(0, 19);

export function startFakeEpayGateway(options: { pid?: string; key?: string } = {}): FakeEpayGateway {
  const pid = options.pid ?? EPAY_TEST_PID;
  const key = options.key ?? EPAY_TEST_KEY;
  const mapiRequests: MapiRequest[] = [];
  const queryRequests: URLSearchParams[] = [];
  const orders = new Map<string, EpayOrder>();
  let sequence = 0;

  const gateway = {} as FakeEpayGateway;

  function createOrder(params: Record<string, string>): Response {
    if (params.pid !== pid) return json({ code: -1, msg: "商户不存在！" });
    if (gatewaySign(params, key) !== params.sign)
      return json({ code: -1, msg: "签名校验失败，请返回重试！" });
    if (!params.clientip) return json({ code: -1, msg: "用户IP地址不能为空" });
    const existing = orders.get(params.out_trade_no ?? "");
    if (existing && (existing.money !== params.money || existing.type !== params.type))
      return json({ code: -1, msg: "支付参数有变化，请重新发起支付" });
    const mode = gateway.mode;
    if (typeof mode === "object") return json(mode);
    sequence += 1;
    const order: EpayOrder = existing ?? {
      tradeNo: `2024050112301${String(599870 + sequence)}`,
      outTradeNo: params.out_trade_no ?? "",
      type: params.type ?? "",
      name: params.name ?? "",
      money: params.money ?? "",
      notifyUrl: params.notify_url ?? "",
      returnUrl: params.return_url ?? "",
      param: params.param ?? "",
      addtime: phpDate(),
      endtime: "",
      status: 0,
    };
    orders.set(order.outTradeNo, order);
    const reply: Record<string, string | number> = { code: 1, msg: "", trade_no: order.tradeNo };
    if (mode === "qrcode") reply.qrcode = `https://qr.alipay.com/bax0${order.tradeNo}`;
    else if (mode === "payurl") reply.payurl = `${gateway.url}pay/${order.type}/${order.tradeNo}/`;
    else reply.urlscheme = `alipays://platformapi/startapp?saId=10000007&qrcode=${order.tradeNo}`;
    return json(reply);
  }

  function queryOrder(query: URLSearchParams): Response {
    queryRequests.push(query);
    if (query.get("act") !== "order") return json({ code: -5, msg: "No Act!" });
    if (query.get("pid") !== pid || query.get("key") !== key) return json({ code: -3, msg: "KEY校验失败" });
    const order = orders.get(query.get("out_trade_no") ?? "");
    if (!order) return json({ code: -1, msg: "订单号不存在" });
    return json({
      code: 1,
      msg: "查询订单号成功！",
      trade_no: order.tradeNo,
      out_trade_no: order.outTradeNo,
      api_trade_no: order.status ? `2024050122001${order.tradeNo.slice(-10)}` : "",
      type: order.type,
      pid: Number(pid),
      addtime: order.addtime,
      endtime: order.endtime,
      name: order.name,
      money: order.money,
      param: order.param,
      buyer: order.status ? "buyer@example.com" : "",
      status: order.status,
    });
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === "/mapi.php" && request.method === "POST") {
        const contentType = request.headers.get("content-type") ?? "";
        const params = Object.fromEntries(new URLSearchParams(await request.text()));
        mapiRequests.push({ params, signValid: gatewaySign(params, key) === params.sign, contentType });
        if (gateway.delayMs > 0) await Bun.sleep(gateway.delayMs);
        return createOrder(params);
      }
      if (url.pathname === "/api.php" && request.method === "GET") return queryOrder(url.searchParams);
      return new Response("Not Found", { status: 404 });
    },
  });

  async function send(notifyUrl: string, params: Record<string, string>): Promise<NotifyDelivery> {
    const url = `${notifyUrl}${notifyUrl.includes("?") ? "&" : "?"}${new URLSearchParams(params)}`;
    const response = await fetch(url, { redirect: "manual" });
    return { url, status: response.status, body: await response.text() };
  }

  function notification(outTradeNo: string, overrides: Record<string, string> = {}): Record<string, string> {
    const order = orders.get(outTradeNo);
    if (!order) throw new Error(`fake EPay has no order ${outTradeNo}`);
    const params: Record<string, string> = {
      pid,
      trade_no: order.tradeNo,
      out_trade_no: order.outTradeNo,
      type: order.type,
      name: order.name,
      money: phpFloat(order.money),
      trade_status: "TRADE_SUCCESS",
      ...(order.param ? { param: order.param } : {}),
      ...overrides,
    };
    return { ...params, sign: gatewaySign(params, key), sign_type: "MD5" };
  }

  Object.assign(gateway, {
    url: `http://127.0.0.1:${server.port}/`,
    pid,
    key,
    mapiRequests,
    queryRequests,
    orders,
    mode: "qrcode" as MapiMode,
    delayMs: 0,
    pay(outTradeNo: string) {
      const order = orders.get(outTradeNo);
      if (!order) throw new Error(`fake EPay has no order ${outTradeNo}`);
      order.status = 1;
      order.endtime = phpDate();
      return order;
    },
    notification,
    notify(outTradeNo: string, overrides?: Record<string, string>) {
      const order = orders.get(outTradeNo);
      if (!order) throw new Error(`fake EPay has no order ${outTradeNo}`);
      return send(order.notifyUrl, notification(outTradeNo, overrides));
    },
    send,
    async close() {
      await server.stop(true);
    },
  });
  return gateway;
}
