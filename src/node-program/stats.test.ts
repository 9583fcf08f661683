/**
 * Counters to push bodies (one per inbound tag, keyed by user number) and access-log lines to
 * online IPs, with v2ray 4.34's own counter names and log lines.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AccessLogTail, parseAccessLog } from "./access-log.ts";
import { usageByInbound } from "./stats.ts";

describe("usageByInbound", () => {
  test("uplink is upload, downlink download, per inbound tag and user number; zeros and strangers are left out", () => {
    const usage = usageByInbound([
      { name: "user>>>vmesh_tcp|1>>>traffic>>>uplink", value: 89 },
      { name: "user>>>vmesh_tcp|1>>>traffic>>>downlink", value: 5_243_085 },
      { name: "user>>>vmesh_ws|1>>>traffic>>>downlink", value: 1000 },
      { name: "user>>>vmesh_tcp|2>>>traffic>>>uplink", value: 1_048_819 },
      { name: "user>>>vmesh_tcp|3>>>traffic>>>uplink", value: 0 },
      { name: "user>>>vmesh_tcp|3>>>traffic>>>downlink", value: 0 },
      { name: "inbound>>>vmesh_tcp>>>traffic>>>downlink", value: 5_345_117 },
      { name: "user>>>someone@example.com>>>traffic>>>downlink", value: 5 },
      { name: "user>>>a|b|4>>>traffic>>>downlink", value: 7 },
    ]);
    expect(Object.fromEntries(usage)).toEqual({
      vmesh_tcp: { "1": [89, 5_243_085], "2": [1_048_819, 0] },
      vmesh_ws: { "1": [0, 1000] },
      "a|b": { "4": [0, 7] },
    });
  });

  test("only ids the panel accepts (the integer's own digits) make it into a report", () => {
    const usage = usageByInbound([
      { name: "user>>>vmesh_tcp|08>>>traffic>>>downlink", value: 5 },
      { name: "user>>>vmesh_tcp|0>>>traffic>>>downlink", value: 5 },
      { name: "user>>>vmesh_tcp|99999999999999999>>>traffic>>>downlink", value: 5 },
      { name: "user>>>vmesh_tcp|8>>>traffic>>>downlink", value: 5 },
    ]);
    expect(Object.fromEntries(usage)).toEqual({ vmesh_tcp: { "8": [0, 5] } });
  });
});

describe("access log", () => {
  const dir = mkdtempSync(join(tmpdir(), "ferry-access-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("accepted lines give each user's distinct source IPs", () => {
    const text = [
      "2026/11/21 13:03:32 127.0.0.1:36516 accepted tcp:127.0.0.1:18080 [direct] email: vmesh_tcp|2",
      "2026/11/21 13:03:33 127.0.0.1:36518 accepted tcp:example.com:443 [direct] email: vmesh_ws|2",
      "2026/11/21 13:03:34 tcp:[2001:db8::7]:50000 accepted tcp:example.com:443 [direct] email: ss|5",
      "2026/11/21 13:03:35 203.0.113.4:1234 rejected  v2ray.com/core/proxy/vmess/encoding: invalid user",
      "2026/11/21 13:03:36 198.51.100.2:999 accepted tcp:example.com:80 [direct] email: vmesh_tcp|2",
    ].join("\n");
    expect(parseAccessLog(text)).toEqual({ "2": ["127.0.0.1", "198.51.100.2"], "5": ["2001:db8::7"] });
  });

  test("within the panel's alive limits: canonical ids, at most 8 IPs a user", () => {
    const line = (ip: string, email: string) =>
      `2026/11/21 13:03:32 ${ip}:1 accepted tcp:example.com:443 [direct] email: ${email}`;
    const lines = Array.from({ length: 20 }, (_, i) => line(`198.51.100.${i}`, "vmesh_tcp|3"));
    lines.push(line("198.51.100.1", "vmesh_tcp|03"));
    expect(parseAccessLog(lines.join("\n"))).toEqual({
      "3": Array.from({ length: 8 }, (_, i) => `198.51.100.${i}`),
    });
  });

  test("the tail reads only new whole lines and starts at the end of what an earlier run left", () => {
    const file = join(dir, "access.log");
    writeFileSync(file, "2026/11/21 13:00:00 10.0.0.1:1 accepted tcp:a:1 [direct] email: vmesh_tcp|1\n");
    const tail = new AccessLogTail(file);
    expect(tail.read()).toEqual({});
    appendFileSync(
      file,
      "2026/11/21 13:00:01 10.0.0.2:1 accepted tcp:a:1 [direct] email: vmesh_tcp|1\n2026/11/21",
    );
    expect(tail.read()).toEqual({ "1": ["10.0.0.2"] });
    appendFileSync(file, " 13:00:02 10.0.0.3:1 accepted tcp:a:1 [direct] email: vmesh_tcp|9\n");
    expect(tail.read()).toEqual({ "9": ["10.0.0.3"] });
    expect(tail.read()).toEqual({});
  });

  test("a large log is emptied after reading, and the tail carries on from its start", () => {
    const file = join(dir, "big.log");
    writeFileSync(file, "");
    const tail = new AccessLogTail(file);
    const line = "2026/11/21 13:00:00 10.0.0.1:1 accepted tcp:a:1 [direct] email: vmesh_tcp|1\n";
    writeFileSync(file, line.repeat(Math.ceil((1024 * 1024) / line.length) + 1));
    expect(tail.read()).toEqual({ "1": ["10.0.0.1"] });
    expect(statSync(file).size).toBe(0);
    appendFileSync(file, line.replace("10.0.0.1", "10.0.0.8"));
    expect(tail.read()).toEqual({ "1": ["10.0.0.8"] });
  });
});
