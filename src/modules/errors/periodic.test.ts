/** The periodic jobs' runner: one round at a time, failures logged, stop() waits for the round. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../../tests/harness.ts";
import { startPeriodic } from "./periodic.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

test("a round slower than the interval is never joined by the next one", async () => {
  let inFlight = 0;
  let most = 0;
  let rounds = 0;
  const job = await startPeriodic(server.context, "slow round", 2, async () => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    await Bun.sleep(25);
    rounds += 1;
    inFlight -= 1;
  });
  await Bun.sleep(120);
  await job.stop();
  expect(inFlight).toBe(0);
  expect(most).toBe(1);
  expect(rounds).toBeGreaterThanOrEqual(2);
});

test("a failing round is logged under the job's name and the next one still runs", async () => {
  let rounds = 0;
  const job = await startPeriodic(server.context, "failing round", 2, async () => {
    rounds += 1;
    if (rounds === 1) throw new Error("the first round fails");
  });
  while (rounds < 2) await Bun.sleep(2);
  await job.stop();
  const logged = await server.context.db.all<{ name: string; msg: string }>(
    "SELECT name, msg FROM error_logs WHERE name = 'failing round'",
  );
  expect(logged).toEqual([{ name: "failing round", msg: "the first round fails" }]);
});
