/**
 * The server's outbound connections (issue 26, C11): the address checked is the address connected
 * to, with the name kept for Host and TLS; redirects are not followed. Against real servers on
 * loopback (so with private addresses allowed, as `--allow-private-urls` does); the refusals
 * themselves are shown end to end in tests/private-urls.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { outboundFetch, PrivateTargetError, resolveTarget } from "./outbound.ts";

const TLS_DIR = join(import.meta.dir, "../../tests/fakes/tls");
let cert: string;
let server: ReturnType<typeof Bun.serve>;
const seen: { host: string | null; path: string }[] = [];

beforeAll(async () => {
  cert = await Bun.file(join(TLS_DIR, "localhost-cert.pem")).text();
  // Where resolveTarget sends "localhost" on this machine (127.0.0.1 or ::1).
  const address = await resolveTarget("localhost", true);
  server = Bun.serve({
    hostname: address,
    port: 0,
    tls: { cert, key: await Bun.file(join(TLS_DIR, "localhost-key.pem")).text() },
    fetch(request) {
      const url = new URL(request.url);
      seen.push({ host: request.headers.get("host"), path: `${url.pathname}${url.search}` });
      if (url.pathname === "/moved") return Response.redirect("https://localhost/elsewhere", 302);
      return new Response("ok");
    },
  });
});
afterAll(() => server?.stop(true));

describe("outboundFetch", () => {
  test("https by name: connects to the checked address, with the name for Host, SNI and the certificate", async () => {
    const response = await outboundFetch(
      `https://localhost:${server.port}/api.php?act=order`,
      { tls: { ca: cert } },
      true,
    );
    expect(await response.text()).toBe("ok");
    expect(seen.at(-1)).toEqual({ host: `localhost:${server.port}`, path: "/api.php?act=order" });
  });

  test("the certificate must be for the name in the URL", async () => {
    const address = await resolveTarget("localhost", true);
    const literal = address.includes(":") ? `[${address}]` : address;
    await expect(
      outboundFetch(`https://${literal}:${server.port}/`, { tls: { ca: cert } }, true),
    ).rejects.toThrow();
  });

  test("a redirect is not followed (it would lead past the check)", async () => {
    const before = seen.length;
    await expect(
      outboundFetch(`https://localhost:${server.port}/moved`, { tls: { ca: cert } }, true),
    ).rejects.toThrow();
    expect(seen.length).toBe(before + 1);
  });
});

describe("resolveTarget", () => {
  test("without the flag: local names and addresses are refused before any connection", async () => {
    for (const host of ["localhost", "127.0.0.1", "[::1]", "10.0.0.1", "169.254.169.254", "0.0.0.0"]) {
      await expect(resolveTarget(host, false)).rejects.toBeInstanceOf(PrivateTargetError);
    }
    await expect(resolveTarget("localhost", false)).rejects.toThrow(
      "拒绝连接 localhost（localhost，本机地址）：不连接本机、内网或链路本地地址；内网网关请以 --allow-private-urls 启动服务",
    );
  });

  test("a public address is its own target, without asking a resolver", async () => {
    expect(await resolveTarget("203.0.113.5", false)).toBe("203.0.113.5");
    expect(await resolveTarget("[2001:db8::1]", false)).toBe("2001:db8::1");
  });
});
