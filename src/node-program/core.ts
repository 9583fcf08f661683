/**
 * The proxy core as a child process: its config file and pid file live in the agent's data
 * directory, its output goes to `core.log` there, and when it dies on its own it is started again
 * with a growing pause. v2ray 4.x has no reload (SIGHUP kills it), so a new config means a restart.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { acceptsConnections } from "../lib/tcp.ts";
import { API_TAG, type CoreConfig, type CoreDialect } from "./core-config.ts";

const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;
/** A core that ran this long before dying starts again without waiting long. */
const STABLE_MS = 60_000;
const MAX_LOG_BYTES = 10 * 1024 * 1024;

export interface CoreProcessOptions {
  bin: string;
  dialect: CoreDialect;
  dataDir: string;
  log: (message: string) => void;
}

/** The command line each core wants. */
function coreArgs(dialect: CoreDialect, bin: string, configFile: string): string[] {
  return dialect === "xray" ? [bin, "run", "-c", configFile] : [bin, "-config", configFile];
}

/** The loopback TCP ports a started core must be accepting on (the API first). */
function tcpPorts(config: CoreConfig): number[] {
  return config.inbounds
    .filter((inbound) => inbound.tag === API_TAG || inbound.protocol !== "hysteria")
    .map((inbound) => inbound.port);
}

const alive = (pid: number) => {
  try {
    // A zombie still answers kill(0); its cmdline is empty.
    return readFileSync(`/proc/${pid}/cmdline`, "utf8") !== "";
  } catch {
    return false;
  }
};

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await Bun.sleep(25);
  }
  return true;
}

export class CoreProcess {
  readonly configFile: string;
  readonly pidFile: string;
  readonly logFile: string;
  /** The config the core runs (or will run after its next start) with. */
  config: CoreConfig | null = null;
  private child: Subprocess | null = null;
  private stopping = false;
  private startedAt = 0;
  private backoffMs = FIRST_BACKOFF_MS;
  private restartTimer: ReturnType<typeof setTimeout> | null = null;
  /** Called after the supervisor brought a dead core back (its counters started from zero). */
  onRevived: () => void = () => {};

  constructor(private readonly options: CoreProcessOptions) {
    this.configFile = join(options.dataDir, "core.json");
    this.pidFile = join(options.dataDir, "core.pid");
    this.logFile = join(options.dataDir, "core.log");
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Writes the config file (atomically) the core reads at its next start. */
  writeConfig(config: CoreConfig) {
    this.config = config;
    const staged = `${this.configFile}.tmp`;
    writeFileSync(staged, JSON.stringify(config, null, 2), { mode: 0o600 });
    renameSync(staged, this.configFile);
  }

  /**
   * Starts the core with this config and waits until its ports accept connections. When it does
   * not come up the error is thrown and the supervisor keeps trying, with this config or a newer one.
   */
  async start(config: CoreConfig): Promise<void> {
    this.stopping = false;
    this.clearRestartTimer();
    this.writeConfig(config);
    try {
      await this.spawn();
    } catch (error) {
      if (!this.stopping) this.scheduleRestart();
      throw error;
    }
  }

  /**
   * Stops the core. SIGKILL right after a last counter read stops it at once, so no byte moves
   * between the read and the stop (v2ray keeps nothing to save; connections drop either way).
   */
  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    this.stopping = true;
    this.clearRestartTimer();
    const child = this.child;
    if (!child) return;
    child.kill(signal);
    const stopped = await Promise.race([
      child.exited.then(() => true),
      Bun.sleep(STOP_TIMEOUT_MS).then(() => false),
    ]);
    if (!stopped) {
      child.kill("SIGKILL");
      await child.exited;
    }
    this.child = null;
    rmSync(this.pidFile, { force: true });
  }

  /**
   * A core left running by an agent that was killed (its pid file names a live process started
   * with our config file), so the caller can read its counters before stopping it.
   */
  leftoverPid(): number | null {
    if (!existsSync(this.pidFile)) return null;
    const pid = Number.parseInt(readFileSync(this.pidFile, "utf8"), 10);
    if (!Number.isSafeInteger(pid) || pid <= 0) return null;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return cmdline.includes(this.configFile) ? pid : null;
    } catch {
      return null;
    }
  }

  /** The config file a leftover core was started with. */
  leftoverConfig(): CoreConfig | null {
    try {
      return JSON.parse(readFileSync(this.configFile, "utf8")) as CoreConfig;
    } catch {
      return null;
    }
  }

  async stopLeftover(pid: number): Promise<void> {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
    if (!(await waitGone(pid, STOP_TIMEOUT_MS))) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
      await waitGone(pid, STOP_TIMEOUT_MS);
    }
    rmSync(this.pidFile, { force: true });
  }

  private async spawn(): Promise<void> {
    const config = this.config;
    if (!config) throw new Error("no core config");
    if (existsSync(this.logFile) && statSync(this.logFile).size > MAX_LOG_BYTES) rmSync(this.logFile);
    const logStart = existsSync(this.logFile) ? statSync(this.logFile).size : 0;
    const output = openSync(this.logFile, "a");
    let child: Subprocess;
    try {
      child = Bun.spawn(coreArgs(this.options.dialect, this.options.bin, this.configFile), {
        stdin: "ignore",
        stdout: output,
        stderr: output,
      });
    } finally {
      closeSync(output);
    }
    this.child = child;
    this.startedAt = Date.now();
    writeFileSync(this.pidFile, String(child.pid));
    // Until it is up, a death is this start's failure, not the supervisor's business.
    let up = false;
    void child.exited.then((code) => up && this.exited(child, code));

    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (const port of tcpPorts(config)) {
      while (!(await acceptsConnections(port))) {
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
          child.kill("SIGKILL");
          await child.exited;
          if (this.child === child) this.child = null;
          rmSync(this.pidFile, { force: true });
          throw new Error(
            `core did not start (exit ${child.exitCode ?? child.signalCode}, port ${port}): ${this.logSince(logStart)}`,
          );
        }
        await Bun.sleep(25);
      }
    }
    up = true;
    this.options.log(`core started (pid ${child.pid})`);
  }

  private logSince(offset: number): string {
    try {
      return readFileSync(this.logFile).subarray(offset).toString("utf8").trim().slice(-2_000);
    } catch {
      return "";
    }
  }

  private exited(child: Subprocess, code: number | null) {
    if (this.child !== child) return;
    this.child = null;
    rmSync(this.pidFile, { force: true });
    if (this.stopping) return;
    if (Date.now() - this.startedAt > STABLE_MS) this.backoffMs = FIRST_BACKOFF_MS;
    this.options.log(`core exited (${code ?? child.signalCode}); starting it again in ${this.backoffMs} ms`);
    this.scheduleRestart();
  }

  private scheduleRestart() {
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.restartTimer = setTimeout(async () => {
      this.restartTimer = null;
      if (this.stopping) return;
      try {
        await this.spawn();
        this.onRevived();
      } catch (error) {
        this.options.log(`core restart failed: ${(error as Error).message}`);
        this.scheduleRestart();
      }
    }, wait);
  }

  private clearRestartTimer() {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }
}
