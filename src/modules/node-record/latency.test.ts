import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../../tests/harness.ts";
import { saveNode } from "../../../tests/nodes.ts";
import { connectLatency } from "../../lib/tcp.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import { probeAllNodes } from "./latency.ts";
import { findAgentRow } from "./service.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

test("a node answering on its proxy port gets a latency; a silent one goes back to 0 (未测速)", async () => {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  // The ss line's port is public_port + 2, so the node's public_port sits 2 below the listener.
  const agent = await saveNode(server, {
    name: "本机",
    ip: "127.0.0.1",
    port: listener.port - 2,
    public_port: listener.port - 2,
  });
  await saveLine(
    server.context,
    lineInput.parse({ name: "SS", agentID: agent._id, protocol: "ss", bridge: "none" }),
  );

  expect(await probeAllNodes(server.context)).toBe(1);
  expect((await findAgentRow(server.context, agent._id))?.speed).toBeGreaterThanOrEqual(1);

  listener.stop(true);
  expect(await probeAllNodes(server.context)).toBe(0);
  expect((await findAgentRow(server.context, agent._id))?.speed).toBe(0);
});

test("connectLatency gives 0 for a refused connection", async () => {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  expect(await connectLatency("127.0.0.1", port, 1000)).toBe(0);
});
