/**
 * The node agent (`ferry node run`, issue 5): pulls the node's config and users from the panel,
 * renders the proxy core's config, runs the core, changes users live where the core allows it,
 * reads per-user traffic from the core's stats API and pushes it, and answers the control port.
 *
 * Every read interval (`readIntervalMs`, 5 s by default; issue 32): counters are read and zeroed in
 * one step and merged into the spool's open report of their inbound, on disk, so a core that dies
 * loses at most the traffic since the last read. Every `push_interval`: the counters are read once
 * more, the open reports sealed (one per inbound tag) and sent in order; a report leaves the spool
 * only on a 200, or when the panel refuses it as malformed (400/413: it never can be applied;
 * logged whole). Every `pull_interval`: config and users are pulled with If-None-Match and applied
 * when changed, users by delta from the version held (node-api/user-delta.ts). Counters are also
 * read right before anything that would lose them (a core restart for a new config, an upgrade,
 * shutdown) and after users are removed. A core left running by a
 * killed agent is read, then stopped.
 *
 * A read resets the core's counters before its bytes are on disk: a crash of this program between
 * the two loses that one read (at most one read interval of traffic), never counts it twice.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FerryNodeConfig, NodeUser } from "../modules/node-api/service.ts";
import { applyUserDelta } from "../modules/node-api/user-delta.ts";
import { AccessLogTail } from "./access-log.ts";
import {
  type AgentStatus,
  type ControlledAgent,
  type ControlServer,
  EXIT_UPGRADED,
  startControlServer,
} from "./control.ts";
import { CoreProcess } from "./core.ts";
import { API_TAG, type CoreConfig, type CoreDialect, renderCoreConfig } from "./core-config.ts";
import { CoreApi, GrpcError, type Stat } from "./grpc.ts";
import { PanelClient, ReportRefused } from "./panel-client.ts";
import { Spool } from "./spool.ts";
import { USER_STATS_PATTERN, usageByInbound } from "./stats.ts";
import { planCoreChange } from "./users.ts";

export interface AgentOptions {
  panel: string;
  nodeId: string;
  token: string;
  dataDir: string;
  dialect: CoreDialect;
  coreBin: string;
  apiPort: number;
  /** Address the proxy inbounds listen on. */
  listen: string;
  /** Overrides the node's ctrl_port from the panel. */
  ctrlPort: number | null;
  ctrlHost: string;
  /** The executable /upgrade replaces (null: none). */
  exe: string | null;
  /** TLS certificate files for inbounds that need one (Hysteria2). */
  certificate?: { certificateFile: string; keyFile: string };
  version: string;
  log?: (message: string) => void;
  /** How often the core's counters are read into the spool (default 5 s). */
  readIntervalMs?: number;
  /** Called to end the process (after an upgrade: EXIT_UPGRADED). */
  exit?: (code: number) => void;
}

/** What the panel last sent, kept on disk so a restart without the panel can still serve. */
interface PanelState {
  config: FerryNodeConfig | null;
  configEtag: string;
  users: NodeUser[] | null;
  usersEtag: string;
}

const DEFAULT_INTERVAL_S = 60;
export const DEFAULT_READ_INTERVAL_MS = 5_000;
const RETRY_MS = 5_000;
/** The panel forgets report ids after 30 days; older reports are dropped rather than risk a double count. */
const REPORT_MAX_AGE_MS = 14 * 86_400_000;
const SHUTDOWN_FLUSH_MS = 5_000;
/** Errors of AlterInbound that mean the change is already in place. */
const ALREADY_DONE = /already exists|not found/i;

export class NodeAgent implements ControlledAgent {
  private readonly log: (message: string) => void;
  private readonly panel: PanelClient;
  private readonly core: CoreProcess;
  private readonly api: CoreApi;
  private readonly spool: Spool;
  private readonly accessLog: AccessLogTail;
  private readonly stateFile: string;
  private state: PanelState;
  private control: ControlServer | null = null;
  private lastPushTime = 0;
  private lastWarnings = "";
  private lastPanelError = "";
  private stopped = false;
  private timers: ReturnType<typeof setTimeout>[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private flushing: Promise<void> | null = null;

  constructor(private readonly options: AgentOptions) {
    this.log = options.log ?? ((message) => console.log(`[ferry-agent] ${message}`));
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    this.panel = new PanelClient(options);
    this.core = new CoreProcess({
      bin: options.coreBin,
      dialect: options.dialect,
      dataDir: options.dataDir,
      log: this.log,
    });
    this.core.onRevived = () => this.log("core is back; its counters restarted from zero");
    this.api = new CoreApi(`127.0.0.1:${options.apiPort}`, options.dialect);
    this.spool = new Spool(join(options.dataDir, "spool"), this.log);
    this.accessLog = new AccessLogTail(join(options.dataDir, "access.log"));
    this.stateFile = join(options.dataDir, "panel.json");
    this.state = this.loadState();
  }

  async start(): Promise<void> {
    await this.recoverLeftoverCore();
    if (this.options.ctrlPort !== null) this.startControl(this.options.ctrlPort);
    if (this.spool.size > 0) this.log(`${this.spool.size} unacknowledged report(s) on disk`);
    this.spool.seal(); // reads an earlier run left open go with the first push
    await this.firstSync();
    if (this.stopped) return;
    void this.flush(); // what an earlier run left unsent goes now, not a push interval later
    this.schedule("read", () => this.exclusive(() => this.collect()));
    this.schedule("push", () => this.pushTick());
    this.schedule("pull", () => this.pullTick());
  }

  /** Pulls config and users now and applies them (the control port's /sync). */
  sync(): Promise<{ users: number }> {
    return this.exclusive(async () => {
      await this.pull();
      await this.apply();
      return { users: this.state.users?.length ?? 0 };
    });
  }

  status(): AgentStatus {
    return {
      version: this.options.version,
      users: this.state.users?.length ?? 0,
      core: this.core.running ? "running" : "stopped",
      pendingReports: this.spool.size,
      lastPushTime: this.lastPushTime,
    };
  }

  upgraded(version: string) {
    this.log(`upgraded to ${version || "a new version"}; exiting for the service manager to restart`);
    void this.shutdown().finally(() => (this.options.exit ?? process.exit)(EXIT_UPGRADED));
  }

  /** Reads the counters a last time, tries to hand the reports over, stops the core. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    await this.exclusive(async () => {
      await this.collect();
      await this.readAndStopCore();
      this.spool.seal();
    });
    await Promise.race([this.flush(), Bun.sleep(SHUTDOWN_FLUSH_MS)]);
    await this.core.stop();
    this.api.close();
    await this.control?.stop();
  }

  // ---- panel ------------------------------------------------------------------------------

  private async firstSync() {
    while (!this.stopped) {
      try {
        await this.sync();
        return;
      } catch (error) {
        this.panelFailed(error);
        if (this.state.config && this.state.users) {
          this.log("starting from the config and users last received");
          await this.exclusive(() => this.apply());
          return;
        }
      }
      await Bun.sleep(RETRY_MS);
    }
  }

  private async pull() {
    const config = await this.panel.getConfig(this.state.config ? this.state.configEtag : "");
    const users = await this.pullUsers();
    this.panelAnswered();
    if (!config.changed && !users) return;
    this.state = {
      ...this.state,
      ...(config.changed ? { config: config.body, configEtag: config.etag } : {}),
      ...(users ?? {}),
    };
    this.saveState();
  }

  /**
   * The users' new list and version, or null when unchanged. A delta is applied to the list held
   * and checked against the version the panel named; one that does not add up is dropped and the
   * full list pulled instead.
   */
  private async pullUsers(): Promise<Pick<PanelState, "users" | "usersEtag"> | null> {
    const held = this.state.users;
    const pulled = await this.panel.getUsers(held ? this.state.usersEtag : "");
    if (!pulled.changed) return null;
    if ("users" in pulled.body) return { users: pulled.body.users, usersEtag: pulled.etag };
    const users = held ? applyUserDelta(held, pulled.body.delta) : null;
    if (users) return { users, usersEtag: pulled.etag };
    this.log("the user delta did not add up to the panel's version; pulling the full list");
    const full = await this.panel.getUsers("");
    if (!full.changed || !("users" in full.body)) throw new Error("user list: no full list from the panel");
    return { users: full.body.users, usersEtag: full.etag };
  }

  private panelFailed(error: unknown) {
    const message = (error as Error).message;
    if (message !== this.lastPanelError) this.log(message);
    this.lastPanelError = message;
  }

  private panelAnswered() {
    if (this.lastPanelError) this.log("panel reachable again");
    this.lastPanelError = "";
  }

  private loadState(): PanelState {
    try {
      return JSON.parse(readFileSync(this.stateFile, "utf8")) as PanelState;
    } catch {
      return { config: null, configEtag: "", users: null, usersEtag: "" };
    }
  }

  private saveState() {
    const staged = `${this.stateFile}.tmp`;
    writeFileSync(staged, JSON.stringify(this.state), { mode: 0o600 });
    renameSync(staged, this.stateFile);
  }

  // ---- core -------------------------------------------------------------------------------

  private render(config: FerryNodeConfig, users: NodeUser[]): CoreConfig {
    const { config: rendered, warnings } = renderCoreConfig({
      agent: config.node,
      lines: config.lines,
      users: users.map((user) => ({ id: String(user.id), uuid: user.uuid })),
      dialect: this.options.dialect,
      apiPort: this.options.apiPort,
      listen: this.options.listen,
      certificate: this.options.certificate,
      accessLog: this.accessLog.file,
    });
    const joined = warnings.join("; ");
    if (joined && joined !== this.lastWarnings) this.log(`core config: ${joined}`);
    this.lastWarnings = joined;
    return rendered;
  }

  /** Brings the core to the last config and users: live user changes where possible, else a restart. */
  private async apply() {
    const { config, users } = this.state;
    if (!config || !users || this.stopped) return;
    if (this.options.ctrlPort === null && this.control?.port !== config.ctrl_port)
      this.startControl(config.ctrl_port);
    const next = this.render(config, users);
    const plan = planCoreChange(this.core.running ? this.core.config : null, next, this.options.dialect);
    if (plan.restart) return this.restartCore(next);
    if (plan.remove.length === 0 && plan.add.length === 0) return;
    try {
      for (const { tag, email } of plan.remove) await this.alter(() => this.api.removeUser(tag, email));
      for (const { tag, user } of plan.add) await this.alter(() => this.api.addUser(tag, user));
      this.core.writeConfig(next);
      this.log(`users changed live: ${plan.add.length} added, ${plan.remove.length} removed`);
    } catch (error) {
      this.log(`live user change failed (${(error as Error).message}); restarting the core`);
      return this.restartCore(next);
    }
    // Removed users' counters stay until read; read them now, while they are still attributable.
    if (plan.remove.length > 0) await this.collect();
  }

  private async alter(change: () => Promise<void>) {
    try {
      await change();
    } catch (error) {
      if (!(error instanceof GrpcError && ALREADY_DONE.test(error.message))) throw error;
    }
  }

  private async restartCore(next: CoreConfig) {
    // A restart zeroes every counter: read them first.
    await this.collect();
    await this.readAndStopCore();
    try {
      await this.core.start(next);
    } catch (error) {
      this.log(`core: ${(error as Error).message}`);
    }
  }

  private async recoverLeftoverCore() {
    const pid = this.core.leftoverPid();
    if (pid === null) return;
    const port = this.core.leftoverConfig()?.inbounds.find((inbound) => inbound.tag === API_TAG)?.port;
    this.log(
      `a core from an earlier run is still running (pid ${pid}); reading its counters, then stopping it`,
    );
    if (port !== undefined) {
      const api = new CoreApi(`127.0.0.1:${port}`, this.options.dialect);
      try {
        this.spoolStats(await api.queryStats(USER_STATS_PATTERN, true));
      } catch (error) {
        this.log(`could not read the earlier core's counters: ${(error as Error).message}`);
      } finally {
        api.close();
      }
    }
    await this.core.stopLeftover(pid);
  }

  // ---- traffic ----------------------------------------------------------------------------

  /** Reads and zeroes the per-user counters and merges them into the spool. Call inside exclusive(). */
  private async collect() {
    if (!this.core.running) return;
    try {
      this.spoolStats(await this.api.queryStats(USER_STATS_PATTERN, true));
    } catch (error) {
      this.log(`reading traffic counters failed: ${(error as Error).message}`);
    }
  }

  private spoolStats(stats: Stat[]) {
    for (const [inbound, usage] of usageByInbound(stats)) this.spool.merge(inbound, usage);
  }

  /**
   * Before a planned stop of the core (after a durable collect()): a last read and the core killed
   * right after it, so nothing moves uncounted between the two; then that read is spooled. Only
   * the bytes between the two reads (milliseconds) depend on this program not crashing in between.
   * Call inside exclusive().
   */
  private async readAndStopCore() {
    if (!this.core.running) return this.core.stop();
    let stats: Stat[] = [];
    try {
      stats = await this.api.queryStats(USER_STATS_PATTERN, true);
    } catch (error) {
      this.log(`reading traffic counters failed: ${(error as Error).message}`);
    }
    await this.core.stop("SIGKILL");
    this.spoolStats(stats);
  }

  /** A last read, then the open reports closed for sending. Call inside exclusive(). */
  private async collectAndSeal() {
    await this.collect();
    this.spool.seal();
  }

  /** Sends the spooled reports in order until one is not acknowledged. */
  private flush(): Promise<void> {
    this.flushing ??= this.sendPending().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async sendPending() {
    for (const report of [...this.spool.pending]) {
      if (Date.now() - report.createdAt > REPORT_MAX_AGE_MS) {
        this.log(`report ${report.id} was never acknowledged in 14 days; dropped: ${JSON.stringify(report)}`);
        this.spool.acknowledge(report.id);
        continue;
      }
      try {
        const answer = await this.panel.push(report);
        this.panelAnswered();
        this.spool.acknowledge(report.id);
        this.lastPushTime = Date.now();
        if (answer.duplicate) this.log(`report ${report.id} had been applied already`);
      } catch (error) {
        if (error instanceof ReportRefused) {
          // Kept, it would hold back every later report; its content stays in the log.
          this.log(
            `report ${report.id} refused by the panel (${error.message}); dropped: ${JSON.stringify(report)}`,
          );
          this.spool.acknowledge(report.id);
          continue;
        }
        this.panelFailed(error);
        return;
      }
    }
  }

  private async sendAlive() {
    const online = this.accessLog.read();
    if (Object.keys(online).length === 0) return;
    try {
      await this.panel.alive(online);
    } catch (error) {
      this.panelFailed(error);
    }
  }

  // ---- loops ------------------------------------------------------------------------------

  private async pushTick() {
    await this.exclusive(() => this.collectAndSeal());
    await this.flush();
    await this.sendAlive();
  }

  private async pullTick() {
    try {
      await this.sync();
    } catch (error) {
      this.panelFailed(error);
      // An outage is also when the spool fills: keep offering it.
      await this.flush();
    }
  }

  private interval(kind: "read" | "push" | "pull"): number {
    if (kind === "read") return this.options.readIntervalMs ?? DEFAULT_READ_INTERVAL_MS;
    const base = this.state.config?.base_config;
    const seconds = kind === "push" ? base?.push_interval : base?.pull_interval;
    return (seconds && seconds > 0 ? seconds : DEFAULT_INTERVAL_S) * 1000;
  }

  /** Runs `tick` every interval (re-read each time: the panel may change it). */
  private schedule(kind: "read" | "push" | "pull", tick: () => Promise<void>) {
    const next = () => {
      if (this.stopped) return;
      const timer = setTimeout(async () => {
        this.timers = this.timers.filter((candidate) => candidate !== timer);
        try {
          await tick();
        } catch (error) {
          this.log(`${kind}: ${(error as Error).message}`);
        }
        next();
      }, this.interval(kind));
      this.timers.push(timer);
    };
    next();
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  private startControl(port: number) {
    const previous = this.control;
    this.control = null;
    void previous?.stop();
    try {
      this.control = startControlServer({
        host: this.options.ctrlHost,
        port,
        token: this.options.token,
        panelUrl: this.options.panel,
        exe: this.options.exe,
        agent: this,
      });
      this.log(`control port listening on ${this.options.ctrlHost}:${this.control.port}`);
    } catch (error) {
      this.log(`control port ${port}: ${(error as Error).message}`);
    }
  }
}
