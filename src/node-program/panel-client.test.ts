/**
 * How the agent tells a report the panel will never take (400 malformed, 413 too large: it is
 * dropped, or it would hold back every later report) from a failure worth retrying.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PanelClient, PanelError, ReportRefused } from "./panel-client.ts";

let panel: ReturnType<typeof Bun.serve>;
let status = 200;

beforeAll(() => {
  panel = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response(JSON.stringify({ message: "refused" }), { status }),
  });
});
afterAll(() => panel.stop(true));

const report = { id: "r1", inbound: "vmesh_tcp", usage: { "1": [0, 1] as [number, number] }, createdAt: 0 };

describe("push", () => {
  const client = () =>
    new PanelClient({ panel: `http://127.0.0.1:${panel.port}`, nodeId: "1", token: "t", version: "test" });

  test("400 and 413 are refusals: the report cannot be applied however often it is sent", async () => {
    for (const code of [400, 413]) {
      status = code;
      await expect(client().push(report)).rejects.toBeInstanceOf(ReportRefused);
    }
  });

  test("other failures are worth a retry", async () => {
    for (const code of [403, 500, 503]) {
      status = code;
      const failure = await client()
        .push(report)
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PanelError);
      expect(failure).not.toBeInstanceOf(ReportRefused);
    }
  });
});
