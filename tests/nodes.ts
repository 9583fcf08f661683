/**
 * Node test helpers: the node agent executable the panel hands out (FERRY_AGENT_BINARY), and v2ray
 * nodes saved through the service the back office uses.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentInput } from "../src/modules/node-record/schema.ts";
import { saveAgent } from "../src/modules/node-record/service.ts";
import type { TestServer } from "./harness.ts";

export interface AgentBinary {
  /** The temp directory the file is in (tests put their other files there too). */
  dir: string;
  /** The executable the panel hands out. */
  file: string;
  /** Puts FERRY_AGENT_BINARY back as it was before and deletes `dir`. */
  restore(): void;
}

/**
 * Writes `contents` to `name` in a fresh temp directory (`prefix`…) and makes it the agent the
 * panel hands out: FERRY_AGENT_BINARY, which this process and a CLI child started from it read.
 */
export function serveAgentBinary(prefix: string, contents: string, name = "served-ferry"): AgentBinary {
  const saved = process.env.FERRY_AGENT_BINARY;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, name);
  writeFileSync(file, contents);
  process.env.FERRY_AGENT_BINARY = file;
  return {
    dir,
    file,
    restore() {
      if (saved === undefined) delete process.env.FERRY_AGENT_BINARY;
      else process.env.FERRY_AGENT_BINARY = saved;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The rest of a v2ray node's form as tests fill it: the CLI's default ports, on Ubuntu x86. */
export const V2RAY_NODE = {
  type: "v2ray",
  ctrl_port: 888,
  zz_port: 20000,
  port: 10000,
  public_port: 10000,
  serverType: "ubuntu_x86",
};

/** Saves a node through the service the back office uses: a v2ray node (V2RAY_NODE) unless `fields` say otherwise. */
export async function saveNode(
  server: TestServer,
  fields: { name: string; ip: string } & Record<string, unknown>,
) {
  return await saveAgent(server.context, agentInput.parse({ ...V2RAY_NODE, ...fields }));
}
