/**
 * `ferry agency set|attach|allocate|detach|list|unset`, run as real processes against the data
 * directory of a running server: what the CLI does is what the owner's /api/agency/customers shows;
 * refusals are one line and move no traffic.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tx } from "../src/db/db.ts";
import { GB } from "../src/lib/traffic.ts";
import type { Agency, AgencyCustomers, AllocateResult } from "../src/modules/agency/schema.ts";
import { changeTraffic } from "../src/modules/ledger/service.ts";
import { loggedInClient, type TestServer } from "../tests/harness.ts";
import { expectHelp, expectOneLineError, type FerryIn, ferry, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli()));
afterAll(() => server?.close());

const trafficOf = async (id: string) =>
  (await server.context.db.get<{ traffic: number }>("SELECT traffic FROM balances WHERE user_id = ?", id))
    ?.traffic;

test("every agency command has --help", async () => {
  await expectHelp([
    [["agency"], ["list", "set", "unset", "attach", "detach", "allocate"]],
    [
      ["agency", "allocate"],
      ["--traffic-g", "--data", "--json"],
    ],
    [
      ["agency", "set"],
      ["--name", "--data", "--json"],
    ],
  ]);
});

test("set, attach and allocate: the owner's page shows the customer with the traffic", async () => {
  // Allocations share the transfer minimum (default 20 G); this test moves a few G.
  await server.context.settings.update({ minPushNum: 1 });
  const owner = await loggedInClient(server);
  const customer = await loggedInClient(server);
  const db = server.context.db;
  await tx(
    db,
    async () =>
      await changeTraffic(db, {
        userId: owner.user.id,
        type: "buy",
        desc: "测试",
        traffic: 5 * GB,
        now: Date.now(),
        timeZone: "Asia/Shanghai",
      }),
  );
  const set = await cli.json<Agency>(["agency", "set", owner.email, "--name", "华南"]);
  expect(set).toMatchObject({ email: owner.email, name: "华南", customerCount: 0 });
  const attached = await cli.json<Agency>(["agency", "attach", owner.email, customer.email]);
  expect(attached.customerCount).toBe(1);

  const text = await cli.ok(["agency", "allocate", owner.email, customer.email, "--traffic-g", "2"]);
  expect(text.trim()).toBe(`allocated 2.00 G to ${customer.email}: owner now 3.00 G, customer 2.00 G`);
  const json = await cli.json<AllocateResult>([
    "agency",
    "allocate",
    owner.email,
    customer.email,
    "--traffic-g",
    "1",
  ]);
  expect(json).toEqual({
    customerEmail: customer.email,
    allocated: GB,
    ownerTraffic: 2 * GB,
    customerTraffic: 3 * GB,
  });

  const page = await owner.client.call<AgencyCustomers>("/api/agency/customers");
  expect(page.data?.available).toBe(2 * GB);
  expect(page.data?.customers.map((c) => [c.email, c.traffic, c.allocated])).toEqual([
    [customer.email, 3 * GB, 3 * GB],
  ]);
  expect((await cli.ok(["agency", "list"])).trim()).toContain(`agency ${owner.email} (华南): 1 customer`);

  // refusals: one line, nothing moves
  const tooMuch = await ferry(
    cli.withData(["agency", "allocate", owner.email, customer.email, "--traffic-g", "3"]),
  );
  expectOneLineError(tooMuch, "可分配的永久流量不足（当前 2G");
  const zero = await ferry(
    cli.withData(["agency", "allocate", owner.email, customer.email, "--traffic-g", "0"]),
  );
  expectOneLineError(zero, /--traffic-g: 分配的流量须大于0/);
  const tiny = await ferry(
    cli.withData(["agency", "allocate", owner.email, customer.email, "--traffic-g", "1e-10"]),
  );
  expectOneLineError(tiny, "最低分配1G");
  const notNumber = await ferry(
    cli.withData(["agency", "allocate", owner.email, customer.email, "--traffic-g", "x"]),
  );
  expectOneLineError(notNumber, /--traffic-g must be a number/);
  const unknownOwner = await ferry(
    cli.withData(["agency", "allocate", "nobody@example.com", customer.email, "--traffic-g", "1"]),
  );
  expectOneLineError(unknownOwner, "用户不存在: nobody@example.com");
  const stranger = await loggedInClient(server);
  const notTheirs = await ferry(
    cli.withData(["agency", "allocate", owner.email, stranger.email, "--traffic-g", "1"]),
  );
  expectOneLineError(notTheirs, "该用户不是您的代理客户");
  expect(await trafficOf(owner.user.id)).toBe(2 * GB);
  expect(await trafficOf(customer.user.id)).toBe(3 * GB);

  // detach keeps the traffic; unset ends the agency
  expect((await cli.json<Agency>(["agency", "detach", owner.email, customer.email])).customerCount).toBe(0);
  expect(await trafficOf(customer.user.id)).toBe(3 * GB);
  expect((await cli.ok(["agency", "unset", owner.email])).trim()).toBe(
    `agency of ${owner.email} ended, 0 customers detached`,
  );
});
