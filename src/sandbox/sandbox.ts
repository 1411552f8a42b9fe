/**
 * The sandbox: runs untrusted component code in a pool of warm node child
 * processes ("runners"), never in the server's process.
 *
 * Isolation of a runner: an empty environment; the heap limit of the call's
 * limits; Node's permission model with reads limited to the runner's own
 * files and the bundle's folder (so each bundle needs a folder of its own),
 * which also denies writes, child processes, workers and addons; and, where
 * bubblewrap works, new pid/ipc/uts namespaces over a read-only view of what
 * node needs, with a network namespace of its own whose only way out is the
 * egress proxy (network/egress-proxy.ts): the public internet, not the
 * server's own networks. Each runner is under cgroups of its own
 * (resources/resource-limiter.ts), and talks to the host over framed
 * messages that user code cannot make the host choke on (runner/frames.ts).
 *
 * Lifecycle: a runner is spawned for one (owner, bundle, heap size) and kept
 * warm for that key's next call (pool.ts). The host stops it with SIGKILL at
 * the call's time limit, when it prints past its log limit, or when its state
 * is suspect (process.exit, an unhandled rejection or an exception outside
 * the call's own promise, work left running that fails later); the next call
 * gets a fresh one. State lives in what a call returns (`db`), never in a
 * runner's memory, though a warm runner keeps its loaded module.
 */
import { randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Logger } from "pino";
import type { ComponentManifest } from "../domain/component-manifest.js";
import { bubblewrapArgs, checkBubblewrap, SANDBOX_EGRESS_SOCKET, type BubblewrapCheck } from "./bubblewrap.js";
import { createEgressPolicy } from "../domain/egress-policy.js";
import { EgressProxy } from "./network/egress-proxy.js";
import { createResourceLimiter, type LimiterKind, type RunnerResources } from "./resources/resource-limiter.js";
import { EGRESS_ARG } from "./runner/runner-args.js";
import type { HttpResponse } from "./http-response.js";
import { DEFAULT_LIMITS, resolveLimits, type Limits } from "./limits.js";
import { detectNodeFlags, runnerNodeArgs, type NodeFlagSupport } from "./node-flags.js";
import { RunnerPool, type RunnerHooks } from "./pool.js";
import type { ComponentCall, DbSnapshot, RunnerCall, StepDone, StepOutcome } from "./protocol.js";
import { prepareRunnerEntry, type RunnerEntry } from "./runner-entry.js";
import type { CallOutcome, EmittedEvent, LogEntry } from "./call-collector.js";
import { RunnerProcess, type SpawnCommand } from "./runner-process.js";
import type { SandboxError } from "./sandbox-error.js";
import { SpareRunner } from "./spare-runner.js";

export interface SandboxOptions {
  /** Runner processes at most, busy and idle together. Default 4. */
  maxRunners?: number;
  /** An idle runner exits after this long. Default 60 s. */
  idleMs?: number;
  logger?: Logger;
  /** "auto": under bubblewrap when it works on this machine. Default "auto". */
  bubblewrap?: "auto" | "off";
  /** Where the sandbox may write its own files (the runner, when running from source). */
  workDir: string;
  /** Keep one runner started ahead, so new code does not wait for a process to start. Default true. */
  spare?: boolean;
  /**
   * What user code may reach. "policy" (default): the public internet and
   * the `allow` list (RUNNEL_EGRESS_ALLOW), through the egress proxy, from
   * a network namespace of the runner's own where bubblewrap can make one.
   * "unrestricted": the host's network, as the server itself has it.
   */
  network?: { mode: "policy" | "unrestricted"; allow?: readonly string[] };
  /** How runners' resources are limited: the best the machine allows (default), or RLIMIT_AS only. */
  resources?: "rlimit";
}

export interface ComponentBundle {
  /** Content hash: the same id is the same code. */
  id: string;
  ownerId: string;
  /**
   * Absolute path of a CommonJS file whose module.exports is the component (or
   * { default: component }). Its whole folder is readable by the runner: one
   * folder per bundle, never shared between owners.
   */
  file: string;
}

export interface InvokeRequest {
  bundle: ComponentBundle;
  call: ComponentCall;
  /** Configured values, read as this.<prop>. An HTTP interface prop's value is { endpoint }; an app prop's is { $auth }. */
  props: Record<string, unknown>;
  /** Names of the $.service.db props (this.<name>.get/set), all over the one store `db`. */
  dbProps: string[];
  /** The deployed source's key-value store before the call. */
  db: DbSnapshot;
  limits: Limits;
}

export interface InvokeCallbacks {
  /** The component called respond() on an HTTP prop, or $.respond() in a step: the HTTP caller can be answered now, before run ends. */
  onRespond?(response: HttpResponse): void;
}

export interface InvokeResult {
  ok: boolean;
  /** What run (of a source or a step), the hook, the options method or the method returned, as JSON. */
  value?: unknown;
  emits: EmittedEvent[];
  /** The store after the call when it changed, else null (also when the runner died: its writes are lost). */
  db: DbSnapshot | null;
  logs: LogEntry[];
  error?: SandboxError;
  /**
   * A step call's exports, summary, exit and sends; on an error too, with
   * what the step recorded before it failed. Absent when the runner could not
   * say (it died, or ran past its time or log limit).
   */
  step?: StepOutcome;
  /** A `steps` call: each step that ended, in order; a step the runner died in is missing (the call's error is its error). */
  chain?: StepDone[];
  durationMs: number;
}

export type InspectResult = { ok: true; manifest: ComponentManifest } | { ok: false; error: SandboxError };

export interface Isolation {
  /** Node's permission model is on (reads limited to the runner and the bundle; no child processes, workers, addons). */
  permissionModel: boolean;
  /** Runners run under bubblewrap. */
  bubblewrap: boolean;
  /**
   * "policy": user code reaches only what the egress policy allows, enforced
   * outside its process (a network namespace whose only way out is the
   * proxy). "unenforced": the policy is asked for but this machine cannot
   * enforce it (no bubblewrap, or no network namespaces): code that skips
   * the runner's shim reaches the host's network. "unrestricted": turned off
   * by the admin (RUNNEL_SANDBOX_NETWORK=unrestricted).
   */
  network: "policy" | "unenforced" | "unrestricted";
  /** How a runner's memory is bounded as a whole (heap, Buffers, native): its own cgroup, or RLIMIT_AS. */
  memory: LimiterKind;
  /** Threads and processes a runner may have (cgroup pids), or null. */
  pidsLimit: number | null;
  /** A runner's CPU is capped at one core (cgroup CPU bandwidth). */
  cpuLimited: boolean;
}

export interface BatchOptions {
  /**
   * The calls are independent (each with its own `db`): the runner runs them
   * side by side, so calls that wait on I/O wait together. Each has its own
   * time limit; one that runs past it stops the runner and fails the others.
   */
  concurrent?: boolean;
}

/** Work a call left behind failed after the call ended (a timer that threw): the runner was replaced. */
export interface LateFault {
  ownerId: string;
  /** The bundle the runner served: which of the owner's sources or workflows this was, the caller knows. */
  bundleId: string;
  error: SandboxError;
}

export interface Sandbox {
  /** Loads the bundle in a runner and describes it. */
  inspect(bundle: ComponentBundle, limits?: Partial<Limits>): Promise<InspectResult>;
  invoke(request: InvokeRequest, callbacks?: InvokeCallbacks): Promise<InvokeResult>;
  /**
   * Runs calls of one bundle one after the other in one runner, sent together:
   * each runs over the store the previous one left, starting from
   * `requests[0].db` (the `db` of the others is not used). Calls stranded by a
   * runner that died run again on a fresh one, from the last store known.
   */
  invokeBatch(requests: InvokeRequest[], callbacks?: Array<InvokeCallbacks | undefined>, options?: BatchOptions): Promise<InvokeResult[]>;
  /** Stops every runner and waits for them. */
  close(): Promise<void>;
  readonly isolation: Isolation;
  /** Tells `listener` of each late fault (one listener; a later call replaces it). */
  onLateFault(listener: (fault: LateFault) => void): void;
}

function realDir(file: string): string {
  try {
    return dirname(realpathSync(file));
  } catch {
    // A missing file: the runner reports it as an InvalidComponent on the call.
    return dirname(resolve(file));
  }
}

function resolveBubblewrap(options: SandboxOptions): BubblewrapCheck {
  if (options.bubblewrap === "off") {
    options.logger?.info("sandbox: bubblewrap is off by configuration; runners rely on the node permission model");
    return { path: null, reason: "off by configuration", ownNetwork: false };
  }
  const check = checkBubblewrap(process.execPath);
  if (check.path) options.logger?.info(`sandbox: runners run under bubblewrap (${check.reason})`);
  else options.logger?.warn(`sandbox: bubblewrap is not used: ${check.reason}; runners rely on the node permission model`);
  return check;
}

/** How a runner reaches the network: through the egress proxy at this host path, and whether it is in a namespace of its own. */
interface RunnerNetwork {
  egressSocket: string;
  ownNamespace: boolean;
}

function spawnCommand(support: NodeFlagSupport, bwrap: string | null, entry: RunnerEntry, bundle: ComponentBundle, memoryMb: number, network: RunnerNetwork | null): SpawnCommand {
  const bundleDir = realDir(bundle.file);
  const readPaths = [...entry.readPaths, bundleDir];
  const inNamespace = bwrap !== null && network?.ownNamespace === true;
  const runnerArgs = network ? [`${EGRESS_ARG}${inNamespace ? SANDBOX_EGRESS_SOCKET : network.egressSocket}`] : [];
  const nodeArgs = runnerNodeArgs({ support, memoryMb, readPaths, entry: entry.file, runnerArgs });
  if (!bwrap) return { command: process.execPath, args: nodeArgs, cwd: bundleDir };
  const args = bubblewrapArgs({ nodeBinary: process.execPath, readOnly: readPaths, cwd: bundleDir, nodeArgs, infoFd: BWRAP_INFO_FD, ...(inNamespace ? { egressSocket: network.egressSocket } : {}) });
  return { command: bwrap, args, cwd: bundleDir, childPidFd: BWRAP_INFO_FD };
}

/**
 * The egress proxy's socket: under the sandbox's work folder when the path
 * fits a Unix socket address (107 bytes), else in a private folder of the
 * system's temporary folder.
 */
function egressSocketPath(workDir: string): string {
  const preferred = join(resolve(workDir), "egress.sock");
  if (Buffer.byteLength(preferred) <= 100) return preferred;
  return join(tmpdir(), `runnel-${process.pid}-${randomBytes(4).toString("hex")}`, "egress.sock");
}

/** The descriptor after stdin, stdout, stderr and the runner's channel (runner/channel.ts). */
const BWRAP_INFO_FD = 4;

/** A call as executeBatch takes it: an InvokeRequest, or the inspect call the sandbox makes itself. */
type RunnerRequest = Omit<InvokeRequest, "call"> & { call: RunnerCall };

function toResult(outcome: CallOutcome, durationMs: number): InvokeResult {
  const result: InvokeResult = { ok: outcome.ok, emits: outcome.emits, db: outcome.db, logs: outcome.logs, durationMs };
  if (outcome.value !== undefined) result.value = outcome.value;
  if (outcome.error) result.error = outcome.error;
  if (outcome.step) result.step = outcome.step;
  if (outcome.chain) result.chain = outcome.chain;
  return result;
}

export function createSandbox(options: SandboxOptions): Sandbox {
  const support = detectNodeFlags();
  if (!support.permission) options.logger?.error("sandbox: this node has no permission model (node 20+ is needed); runners can read every file the server can");
  const bubblewrap = resolveBubblewrap(options);
  const bwrap = bubblewrap.path;
  const networkMode = options.network?.mode ?? "policy";
  const egressSocket = egressSocketPath(options.workDir);
  const proxy = networkMode === "policy" ? new EgressProxy({ policy: createEgressPolicy(options.network?.allow ?? []), socketPath: egressSocket, logger: options.logger }) : null;
  const network: RunnerNetwork | null = proxy ? { egressSocket, ownNamespace: bubblewrap.ownNetwork } : null;
  const networkIsolation: Isolation["network"] = !proxy ? "unrestricted" : bwrap && bubblewrap.ownNetwork ? "policy" : "unenforced";
  if (networkIsolation === "unenforced") {
    options.logger?.warn("sandbox: the network policy cannot be enforced on this machine (it needs bubblewrap with network namespaces): user code that skips the runner's shim reaches the server's own network. Install bubblewrap, or run one user only.");
  }
  let proxyStarted: Promise<void> | undefined;
  const limiter = createResourceLimiter({ logger: options.logger, ...(options.resources ? { prefer: options.resources } : {}) });
  options.logger?.info({ memory: limiter.kind, pids: limiter.pidsLimit, cpu: limiter.cpuLimited }, `sandbox: runners' memory is limited as a whole by ${limiter.kind === "rlimit" ? "RLIMIT_AS (no cgroups can be made here)" : limiter.kind}`);
  /** A runner's command under its own resource limits, and what the runner needs to know of them. */
  const limited = (command: SpawnCommand, memoryMb: number): { command: SpawnCommand; resources: RunnerResources } => {
    const resources = limiter.forRunner(memoryMb);
    return { command: resources.wrap(command), resources };
  };
  const pool = new RunnerPool({ maxRunners: options.maxRunners ?? 4, idleMs: options.idleMs ?? 60_000, logger: options.logger });
  let entry: Promise<RunnerEntry> | undefined;
  let closed = false;
  let lateFaultListener: (fault: LateFault) => void = () => {};

  let spare: SpareRunner | undefined;
  const spareFor = (runnerEntry: RunnerEntry): SpareRunner | undefined => {
    if (options.spare === false) return undefined;
    spare ??= new SpareRunner({
      root: join(options.workDir, "spares"),
      memoryMb: DEFAULT_LIMITS.memoryMb,
      logger: options.logger,
      start: (dir, hooks) =>
        new RunnerProcess({
          ...limited(spawnCommand(support, bwrap, runnerEntry, { id: "spare", ownerId: "", file: join(dir, "component.cjs") }, DEFAULT_LIMITS.memoryMb, network), DEFAULT_LIMITS.memoryMb),
          memoryMb: DEFAULT_LIMITS.memoryMb,
          logger: options.logger,
          ...hooks,
        }),
    });
    return spare;
  };

  const acquire = async (bundle: ComponentBundle, limits: Limits): Promise<RunnerProcess | SandboxError> => {
    if (closed) throw new Error("The sandbox is closed.");
    const runnerEntry = await (entry ??= prepareRunnerEntry(options.workDir));
    // Listening before the first runner starts, so that its first connection finds the socket.
    if (proxy) await (proxyStarted ??= proxy.start());
    const key = JSON.stringify([bundle.ownerId, bundle.id, limits.memoryMb]);
    const spareRunner = spareFor(runnerEntry);
    let started = false;
    const start = (poolHooks: RunnerHooks): RunnerProcess => {
      started = true;
      const hooks: RunnerHooks = {
        onExit: poolHooks.onExit,
        onFault: (runner, error) => {
          if (error) lateFaultListener({ ownerId: bundle.ownerId, bundleId: bundle.id, error });
          poolHooks.onFault(runner, error);
        },
      };
      const bundleFile = realpathOr(bundle.file);
      return (
        spareRunner?.take(bundleFile, limits.memoryMb, hooks) ??
        new RunnerProcess({ ...limited(spawnCommand(support, bwrap, runnerEntry, bundle, limits.memoryMb, network), limits.memoryMb), bundleFile, memoryMb: limits.memoryMb, logger: options.logger, ...hooks })
      );
    };
    try {
      return await pool.acquire(key, start);
    } catch (error) {
      return { code: "RunnerCrashed", name: "RunnerCrashed", message: (error as Error).message };
    } finally {
      // A runner was started for new code: have the next one ready, after this call is under way.
      if (started && spareRunner) setImmediate(() => spareRunner.refill());
    }
  };

  /**
   * `isolated`: each call answers on its own (no held endings), for calls run
   * again after a runner died holding endings, so that the call at fault is
   * the one that gets the error.
   */
  const executeBatch = async (
    requests: RunnerRequest[],
    callbacks: Array<InvokeCallbacks | undefined>,
    options: BatchOptions = {},
    isolated = false,
  ): Promise<InvokeResult[]> => {
    const first = requests[0];
    if (!first) return [];
    const limits = resolveLimits(first.limits);
    // A batch of one has nothing to hold its ending for.
    const held = !isolated && options.concurrent !== true && requests.length > 1;
    const runner = await acquire(first.bundle, limits);
    if (!(runner instanceof RunnerProcess)) return requests.map(() => ({ ok: false, emits: [], db: null, logs: [], error: runner, durationMs: 0 }));
    const started = performance.now();
    let last = started;
    // Calls of a batch mostly share one limits object: resolved once, not once per call.
    let given = first.limits;
    let resolved = limits;
    const resolvedOf = (partial: Limits): Limits => (partial === given ? resolved : ((given = partial), (resolved = resolveLimits(partial))));
    const timed = runner
      .callEach(
        requests.map((request, index) => ({
          call: request.call,
          props: request.props,
          dbProps: request.dbProps,
          db: request.db,
          limits: resolvedOf(request.limits),
          onRespond: callbacks[index]?.onRespond?.bind(callbacks[index]),
        })),
        { concurrent: options.concurrent === true, holdEnds: held },
      )
      .map((promise) =>
        promise.then((outcome) => {
          const now = performance.now();
          // One after the other, a call took the time since the one before it; side by side, since the start.
          // The runner's own measure when it gave one: an ending it held arrived after the call ended.
          const durationMs = Math.round(outcome?.ms ?? now - (options.concurrent ? started : last));
          last = now;
          return outcome === null ? null : toResult(outcome, durationMs);
        }),
      );
    let outcomes: Array<InvokeResult | null>;
    try {
      outcomes = await Promise.all(timed);
    } finally {
      pool.release(runner);
    }
    const stranded = outcomes.indexOf(null);
    if (stranded < 0) return outcomes as InvokeResult[];
    if (stranded === 0 && !held) {
      // Not even the first call ran (the runner was gone already): say so rather than try forever.
      const error: SandboxError = { code: "RunnerCrashed", name: "RunnerCrashed", message: "The runner stopped before the call could start; try again." };
      outcomes[0] = { ok: false, emits: [], db: null, logs: [], error, durationMs: 0 };
      if (outcomes.length === 1) return outcomes as InvokeResult[];
      return [outcomes[0], ...(await executeBatch(requests.slice(1).map((r, i) => (i === 0 ? { ...r, db: first.db } : r)), callbacks.slice(1), options))];
    }
    // The store as the last call that answered left it, for the calls that never ran (or whose ending was lost).
    let db = first.db;
    for (const outcome of outcomes.slice(0, stranded)) if (outcome?.db) db = outcome.db;
    const rest = requests.slice(stranded).map((request, index) => (index === 0 ? { ...request, db } : request));
    const rerun = await executeBatch(rest, callbacks.slice(stranded), options, isolated || held);
    return [...(outcomes.slice(0, stranded) as InvokeResult[]), ...rerun];
  };

  return {
    onLateFault(listener) {
      lateFaultListener = listener;
    },
    isolation: { permissionModel: support.permission !== null, bubblewrap: bwrap !== null, network: networkIsolation, memory: limiter.kind, pidsLimit: limiter.pidsLimit, cpuLimited: limiter.cpuLimited },
    async inspect(bundle, limits) {
      const [result] = await executeBatch([{ bundle, call: { kind: "inspect" }, props: {}, dbProps: [], db: {}, limits: resolveLimits(limits) }], []);
      if (result?.ok) return { ok: true, manifest: result.value as ComponentManifest };
      return { ok: false, error: result?.error ?? { code: "RunnerCrashed", name: "RunnerCrashed", message: "The runner gave no answer." } };
    },
    invoke(request, callbacks) {
      return executeBatch([request], [callbacks]).then(([result]) => result!);
    },
    invokeBatch(requests, callbacks = [], options = {}) {
      return executeBatch(requests, callbacks, options);
    },
    async close() {
      closed = true;
      await spare?.close();
      await pool.close();
      if (proxyStarted) await proxyStarted.then(() => proxy?.close()).catch(() => undefined);
      limiter.close();
      if (entry) await (await entry.catch(() => undefined))?.dispose();
    },
  };
}

function realpathOr(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return resolve(file);
  }
}
