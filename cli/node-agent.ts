/**
 * `ferry node run`: the node agent (src/node-program), run on the node itself by its service manager.
 */
import type { Command } from "commander";
import { Option } from "commander";
import pkg from "../package.json" with { type: "json" };
import { DEFAULT_READ_INTERVAL_MS, NodeAgent } from "../src/node-program/agent.ts";
import { DEFAULT_API_PORT } from "../src/node-program/core-config.ts";
import { isCompiledExecutable } from "../src/node-program/upgrade.ts";
import { die } from "./shared.ts";

const DEFAULT_DATA_DIR = "/var/lib/ferry-node";
const CORE_BINS = { v2ray: "/usr/bin/v2ray", xray: "/usr/local/bin/xray" } as const;

interface RunOptions {
  panel: string;
  nodeId: string;
  token: string;
  dataDir: string;
  core: "v2ray" | "xray";
  coreBin?: string;
  apiPort: string;
  listen: string;
  ctrlPort?: string;
  ctrlHost: string;
  exe?: string;
  cert?: string;
  key?: string;
  readInterval: string;
}

function port(name: string, value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 65_535) die(`${name}: not a port number: ${value}`);
  return number;
}

function panelUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return value.replace(/\/+$/, "");
  } catch {
    // reported below
  }
  die(`--panel: not an http(s) URL: ${value}`);
}

function readInterval(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0.1 || seconds > 3600)
    die(`--read-interval: not a number of seconds between 0.1 and 3600: ${value}`);
  return Math.round(seconds * 1000);
}

/** Adds `run` to the `ferry node` command group. */
export function registerNodeRunCommand(node: Command) {
  node
    .command("run")
    .description(
      "run the node agent on this server: pull config and users from the panel, run the proxy core, " +
        "push per-user traffic, serve the control port (sync, upgrade, status)",
    )
    .requiredOption("--panel <url>", "the panel's address, e.g. https://panel.example.com")
    .requiredOption("--node-id <n>", "the node's number (node_id) or id")
    .requiredOption("--token <token>", "the node's API token (ferry node show <id>)")
    .option("--data-dir <dir>", "where the core config, unsent reports and state are kept", DEFAULT_DATA_DIR)
    .addOption(new Option("--core <core>", "proxy core dialect").choices(["v2ray", "xray"]).default("v2ray"))
    .option("--core-bin <path>", `the core's executable (default ${CORE_BINS.v2ray} or ${CORE_BINS.xray})`)
    .option(
      "--api-port <port>",
      "loopback port of the core's stats and handler API",
      String(DEFAULT_API_PORT),
    )
    .option("--listen <address>", "address the proxy inbounds listen on", "0.0.0.0")
    .option("--ctrl-port <port>", "control port (default: the node's ctrl_port from the panel)")
    .option("--ctrl-host <address>", "address the control port listens on", "0.0.0.0")
    .option("--exe <path>", "the executable /upgrade replaces (default: this executable)")
    .option("--cert <file>", "TLS certificate for Hysteria2 inbounds")
    .option("--key <file>", "TLS key for Hysteria2 inbounds")
    .option(
      "--read-interval <seconds>",
      "how often the core's per-user counters are read into the spool (what a dying core can lose)",
      String(DEFAULT_READ_INTERVAL_MS / 1000),
    )
    .action(async (options: RunOptions) => {
      if (!!options.cert !== !!options.key) die("--cert and --key go together");
      let agent: NodeAgent;
      try {
        agent = new NodeAgent({
          panel: panelUrl(options.panel),
          nodeId: options.nodeId,
          token: options.token,
          dataDir: options.dataDir,
          dialect: options.core,
          coreBin: options.coreBin ?? CORE_BINS[options.core],
          apiPort: port("--api-port", options.apiPort),
          listen: options.listen,
          ctrlPort: options.ctrlPort === undefined ? null : port("--ctrl-port", options.ctrlPort),
          ctrlHost: options.ctrlHost,
          exe: options.exe ?? (isCompiledExecutable() ? process.execPath : null),
          certificate:
            options.cert && options.key ? { certificateFile: options.cert, keyFile: options.key } : undefined,
          version: pkg.version,
          readIntervalMs: readInterval(options.readInterval),
        });
      } catch (error) {
        die(`node agent: ${(error as Error).message}`);
      }
      const stop = () => void agent.shutdown().then(() => process.exit(0));
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
      try {
        await agent.start();
      } catch (error) {
        die(`node agent: ${(error as Error).message}`);
      }
    });
}
