/**
 * The zero-dependency gRPC client against Debian's real v2ray: QueryStats reads and resets the
 * per-user counters a real VMess client's traffic makes, and AlterInbound adds and removes a user
 * (the client gets through only while it is on the inbound), with v2ray's own errors.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  fetchThrough,
  freePort,
  freePortRun,
  type Outcome,
  skipWithoutV2ray,
  V2rayProcesses,
} from "../../tests/v2ray.ts";
import { type CoreAgent, renderCoreConfig } from "./core-config.ts";
import { CoreApi, GrpcError } from "./grpc.ts";
import { planCoreChange } from "./users.ts";

const SKIP = skipWithoutV2ray("src/node-program/grpc.test.ts");
const FILE = randomBytes(200_000);
const U1 = { id: "1", uuid: "be0608f5-cdde-42f1-ac19-495976e7289f" };
const U2 = { id: "2", uuid: "a148238f-4e32-4696-a8ca-142a3b5bb42e" };
const REFUSED_TIMEOUT_MS = 2_500;

let workDir = "";
let v2ray: V2rayProcesses;
let api: CoreApi;
let fileServer: ReturnType<typeof Bun.serve>;
let fileUrl = "";
let nodePort = 0;
const clientPorts: number[] = [];

const NODE: CoreAgent = {
  type: "v2ray",
  ip: "127.0.0.1",
  host: "",
  port: 0,
  ss_method: "aes-256-gcm",
  ws_path: "/ws",
  reality_private_key: "",
  reality_short_id: "",
  hy2_obfs_password: "",
  ss_server_key: "",
};

const render = (users: (typeof U1)[], apiPort: number) =>
  renderCoreConfig({
    agent: { ...NODE, port: nodePort },
    lines: [{ protocol: "vmesh_tcp" }],
    users,
    dialect: "v2ray",
    apiPort,
    listen: "127.0.0.1",
  }).config;

/** A v2ray client with one http inbound per user, each dialing the node as that user. */
function clientFor(users: (typeof U1)[]) {
  return {
    log: { loglevel: "warning" },
    inbounds: users.map((_, index) => ({
      tag: `in-${index}`,
      listen: "127.0.0.1",
      port: clientPorts[index],
      protocol: "http",
      settings: {},
    })),
    outbounds: users.map((user, index) => ({
      tag: `out-${index}`,
      protocol: "vmess",
      settings: {
        vnext: [
          { address: "127.0.0.1", port: nodePort, users: [{ id: user.uuid, alterId: 0, security: "auto" }] },
        ],
      },
    })),
    routing: {
      rules: users.map((_, index) => ({
        type: "field",
        inboundTag: [`in-${index}`],
        outboundTag: `out-${index}`,
      })),
    },
  };
}

const delivered = (outcome: Outcome) =>
  outcome.kind === "delivered" ? outcome.bytes.equals(FILE) || "other bytes" : outcome.reason;

const perUser = async (reset: boolean) =>
  Object.fromEntries((await api.queryStats("user>>>", reset)).map((stat) => [stat.name, stat.value]));

beforeAll(async () => {
  if (SKIP) return;
  workDir = mkdtempSync(join(tmpdir(), "ferry-grpc-"));
  v2ray = new V2rayProcesses(workDir);
  fileServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(FILE) });
  fileUrl = `http://127.0.0.1:${fileServer.port}/file.bin`;
  nodePort = await freePortRun(1);
  const apiPort = await freePort();
  clientPorts.push(await freePort(), await freePort());
  await v2ray.start("node", render([U1], apiPort), [apiPort, nodePort]);
  await v2ray.start("client", clientFor([U1, U2]), clientPorts);
  api = new CoreApi(`127.0.0.1:${apiPort}`, "v2ray");
});

afterAll(async () => {
  api?.close();
  await v2ray?.stopAll();
  fileServer?.stop(true);
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe.skipIf(SKIP)("gRPC to a real v2ray", () => {
  test("QueryStats sees a user's traffic as payload bytes, and reset hands it over exactly once", async () => {
    expect(await perUser(false)).toEqual({});
    expect(delivered(await fetchThrough(clientPorts[0] as number, fileUrl, 10_000))).toBe(true);

    const seen = await perUser(false);
    const down = seen["user>>>vmesh_tcp|1>>>traffic>>>downlink"] ?? 0;
    const up = seen["user>>>vmesh_tcp|1>>>traffic>>>uplink"] ?? 0;
    // The body plus the response headers; the request went up.
    expect(down).toBeGreaterThanOrEqual(FILE.length);
    expect(down).toBeLessThan(FILE.length + 1024);
    expect(up).toBeGreaterThan(0);
    expect(up).toBeLessThan(1024);

    expect(await perUser(true)).toEqual(seen);
    expect(await perUser(false)).toEqual({
      "user>>>vmesh_tcp|1>>>traffic>>>downlink": 0,
      "user>>>vmesh_tcp|1>>>traffic>>>uplink": 0,
    });
  }, 30_000);

  test("AlterInbound adds a user the client can then use, and removing refuses it again", async () => {
    const port = clientPorts[1] as number;
    expect((await fetchThrough(port, fileUrl, REFUSED_TIMEOUT_MS)).kind).toBe("failed");

    const [addition] = planCoreChange(render([U1], 0), render([U1, U2], 0), "v2ray").add;
    if (!addition) throw new Error("no addition planned");
    await api.addUser(addition.tag, addition.user);
    expect(delivered(await fetchThrough(port, fileUrl, 10_000))).toBe(true);
    const counted = await perUser(true);
    expect(counted["user>>>vmesh_tcp|2>>>traffic>>>downlink"]).toBeGreaterThanOrEqual(FILE.length);

    const again = await api.addUser(addition.tag, addition.user).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(GrpcError);
    expect((again as GrpcError).message).toContain("already exists");

    await api.removeUser("vmesh_tcp", "vmesh_tcp|2");
    expect((await fetchThrough(port, fileUrl, REFUSED_TIMEOUT_MS)).kind).toBe("failed");
    const gone = await api.removeUser("vmesh_tcp", "vmesh_tcp|2").catch((error: unknown) => error);
    expect((gone as GrpcError).message).toContain("not found");
    const nowhere = await api.removeUser("no-such-inbound", "x|1").catch((error: unknown) => error);
    expect((nowhere as GrpcError).message).toContain("handler not found");

    // The other user was never disturbed.
    expect(delivered(await fetchThrough(clientPorts[0] as number, fileUrl, 10_000))).toBe(true);
  }, 30_000);
});
