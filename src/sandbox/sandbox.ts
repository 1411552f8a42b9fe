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
 * server's own networks. (The profiling mode, cpu-profile.ts, is for
 * developers and leaves the permission model off.) Each runner is under cgroups of its own
 * (resources/resource-limiter.ts), and talks to the host over framed
 * messages that user code cannot make the host choke on (runner/frames.ts).
 *
 * Lifecycle: a runner serves one owner (and one heap size) for life, and
 * keeps many of that owner's bundles loaded, each in its own module scope
 * (pool.ts, runner/bundles.ts): the isolation boundary is the owner, never
 * shared between owners. It may read only its own folder, into which each
 * bundle it runs is placed first (bundle-placement.ts). The host stops it
 * with SIGKILL at a call's time limit, when it prints past its log limit,
 * or when its state is suspect (process.exit, an unhandled rejection or an
 * exception outside a call's own promise, work left running that fails
 * later). The call at fault fails; calls of other batches that were caught
 * in the same runner run again once, each on a runner not shared with
 * anything else. State lives in what a call returns (`db`), never in a
 * runner's memory, though a warm runner keeps its loaded modules.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Logger } from "pino";
import type { ComponentManifest } from "../domain/component-manifest.js";
import { bubblewrapArgs, checkBubblewrap, SANDBOX_EGRESS_SOCKET, type BubblewrapCheck } from "./bubblewrap.js";
import { createEgressPolicy } from "../domain/egress-policy.js";
import { EgressProxy } from "./network/egress-proxy.js";
import { cpuProfileArgs, CPU_PROFILE_VARIABLE, openProfileFolder, type CpuProfiling } from "./cpu-profile.js";
import { createResourceLimiter, type LimiterKind, type RunnerResources } from "./resources/resource-limiter.js";
import { DEFAULT_MAX_BUNDLES, EGRESS_ARG, MAX_BUNDLES_ARG } from "./runner/runner-args.js";
import type { HttpResponse } from "./http-response.js";
import { DEFAULT_LIMITS, resolveLimits, type Limits } from "./limits.js";
import { detectNodeFlags, runnerNodeArgs, type NodeFlagSupport } from "./node-flags.js";
import { RunnerPool, type RunnerHooks, type RunnerPoolUsage } from "./pool.js";
export type { RunnerPoolUsage } from "./pool.js";
import type { ComponentCall, DbSnapshot, RunnerCall, StepDone, StepOutcome } from "./protocol.js";
import { prepareRunnerEntry, type RunnerEntry } from "./runner-entry.js";
import type { AuthRefreshHandler, CallOutcome, DataStoreHandler, EmittedEvent, LogEntry } from "./call-collector.js";
import { CUT_SHORT, RunnerProcess, type CallAnswer, type SpawnCommand } from "./runner-process.js";
import type { SandboxError } from "./sandbox-error.js";
import { mapSandboxError, mapStackText, type BundleSourceMaps, type MappedBundle } from "./stack-mapping.js";

export interface SandboxOptions {
  /** Memory of all runners together, in MB (each measured as what it holds beyond the shared node binary). Default 1024. */
  runnerMemoryMb?: number;
  /** Runner processes at most, whatever memory allows. Default 512. */
  maxRunners?: number;
  /** Runners of one owner at most while all of them are busy; past it, batches share them. Default: the machine's cores, 2 to 8. */
  maxRunnersPerOwner?: number;
  /** Busy runners in all past which an owner's batches share its runners rather than start more. Default 4 per core. */
  busyRunnersBeforeSharing?: number;
  /** Bundles one runner keeps loaded at most; past it, the least recently used is unloaded. Default 1000. */
  maxBundlesPerRunner?: number;
  /** An idle runner exits after this long. Default 60 s. */
  idleMs?: number;
  logger?: Logger;
  /** "auto": under bubblewrap when it works on this machine. Default "auto". */
  bubblewrap?: "auto" | "off";
  /** Where the sandbox may write its own files (the runner, when running from source). */
  workDir: string;
  /** Runners kept started ahead with no owner, so that a new owner or new code does not wait for a process to start. Default 1. */
  spares?: number;
  /** The heap of spare runners: that of the calls most runs have (the server's default limit). Default 256. */
  spareMemoryMb?: number;
  /**
   * What user code may reach. "policy" (default): the public internet and
   * the `allow` list (RUNNEL_EGRESS_ALLOW), through the egress proxy, from
   * a network namespace of the runner's own where bubblewrap can make one.
   * "unrestricted": the host's network, as the server itself has it.
   */
  network?: { mode: "policy" | "unrestricted"; allow?: readonly string[] };
  /** How runners' resources are limited: the best the machine allows (default), or RLIMIT_AS only. */
  resources?: "rlimit";
  /**
   * The profiling mode (cpu-profile.ts): each runner writes a V8 CPU profile
   * into this folder when it exits, and runs without the permission model.
   * Default: off (the server passes RUNNEL_RUNNER_CPU_PROF from its config). For developers only.
   */
  cpuProfiling?: CpuProfiling | null;
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
  /** Source maps of the file: stacks and logs are mapped through them to the component's own lines (stack-mapping.ts). */
  sourceMaps?: BundleSourceMaps | undefined;
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
  /**
   * Carries out a `data_store` prop's call (get, set, …) on the owner's store
   * it names, at once. The caller binds it to the call's owner and to the
   * stores the call's props name; without it, data store calls fail.
   */
  onDataStore?: DataStoreHandler;
  /** Refreshes a connected account the call's app props were given (`$auth.refresh()`); without it, refresh() fails. */
  onAuth?: AuthRefreshHandler;
  /** Given a function that stops a `steps` call before its next step (a cancelled run); see RunExecutor.cancelInProgress. */
  stopHandle?: { stop?: () => void };
  /**
   * The call's ending arrived (it returned or failed in the runner), before
   * the batch it is part of is done. Not called for a call cut short by its
   * runner dying (it may run again).
   */
  onEnded?(): void;
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
  /** Runners busy and idle, the most allowed, and cold starts so far (metrics, the process registry). */
  usage(): RunnerPoolUsage;
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

/** A runner that may read its own folder `dir` (where the bundles it runs are placed) and the runner's files. */
function spawnCommand(
  support: NodeFlagSupport,
  bwrap: string | null,
  entry: RunnerEntry,
  dir: string,
  memoryMb: number,
  maxBundles: number,
  network: RunnerNetwork | null,
  profiling: CpuProfiling | null,
): SpawnCommand {
  const readPaths = [...entry.readPaths, dir];
  const inNamespace = bwrap !== null && network?.ownNamespace === true;
  const runnerArgs = [`${MAX_BUNDLES_ARG}${maxBundles}`];
  if (network) runnerArgs.push(`${EGRESS_ARG}${inNamespace ? SANDBOX_EGRESS_SOCKET : network.egressSocket}`);
  const nodeArgs = runnerNodeArgs({ support, memoryMb, readPaths, entry: entry.file, runnerArgs, ...(profiling ? { cpuProfileArgs: cpuProfileArgs(profiling) } : {}) });
  if (!bwrap) return { command: process.execPath, args: nodeArgs, cwd: dir };
  const args = bubblewrapArgs({
    nodeBinary: process.execPath,
    readOnly: readPaths,
    ...(profiling ? { writable: [profiling.dir] } : {}),
    cwd: dir,
    nodeArgs,
    infoFd: BWRAP_INFO_FD,
    ...(inNamespace ? { egressSocket: network.egressSocket } : {}),
  });
  return { command: bwrap, args, cwd: dir, childPidFd: BWRAP_INFO_FD };
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

/**
 * Busy runners per core past which owners stop getting more runners: at
 * 1,000 req/s over 100 owners' sources, owners' runners grew from 100 to
 * about 190 while the server itself was the bottleneck.
 */
const BUSY_RUNNERS_PER_CORE = 4;

/** The descriptor after stdin, stdout, stderr and the runner's channel (runner/channel.ts). */
const BWRAP_INFO_FD = 4;

/** A call as executeBatch takes it: an InvokeRequest, or the inspect call the sandbox makes itself. */
type RunnerRequest = Omit<InvokeRequest, "call"> & { call: RunnerCall };

/**
 * The one place a runner's answer becomes a result: its stacks and log lines
 * are mapped to the component's own lines, and no path of the server is left
 * in them (stack-mapping.ts).
 */
function toResult(outcome: CallOutcome, durationMs: number, maps: MappedBundle): InvokeResult {
  const logs = outcome.logs.map((entry) => {
    const text = mapStackText(entry.text, maps);
    return text === entry.text ? entry : Object.assign({}, entry, { text });
  });
  const result: InvokeResult = { ok: outcome.ok, emits: outcome.emits, db: outcome.db, logs, durationMs };
  if (outcome.value !== undefined) result.value = outcome.value;
  if (outcome.error) result.error = mapSandboxError(outcome.error, maps);
  if (outcome.step) result.step = outcome.step;
  if (outcome.chain) result.chain = outcome.chain.map((done) => (done.error ? { ...done, error: mapSandboxError(done.error, maps) } : done));
  return result;
}

/** Bundles whose late faults (a timer that threw after its call) can still be mapped, at most. */
const MAX_REMEMBERED_MAPS = 1024;

export function createSandbox(options: SandboxOptions): Sandbox {
  const support = detectNodeFlags();
  if (!support.permission) options.logger?.error("sandbox: this node has no permission model (node 20+ is needed); runners can read every file the server can");
  const profiling = options.cpuProfiling ? openProfileFolder(options.cpuProfiling) : null;
  if (profiling) {
    options.logger?.warn(
      `sandbox: profiling mode (${CPU_PROFILE_VARIABLE}): each runner writes a CPU profile into ${profiling.dir} when it exits, and runs WITHOUT Node's permission model (it turns off the inspector that writes profiles). For development only: unset ${CPU_PROFILE_VARIABLE} to run untrusted code.`,
    );
  }
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
  let entry: Promise<RunnerEntry> | undefined;
  /** Set once the runner's files are ready: runners start only after. */
  let readyEntry: RunnerEntry | undefined;
  let closed = false;
  let lateFaultListener: (fault: LateFault) => void = () => {};
  /** The maps of bundles run lately, by bundle id: a late fault names only its bundle. */
  const rememberedMaps = new Map<string, MappedBundle>();
  const remember = (bundle: ComponentBundle): void => {
    rememberedMaps.delete(bundle.id);
    if (rememberedMaps.size >= MAX_REMEMBERED_MAPS) rememberedMaps.delete(rememberedMaps.keys().next().value!);
    rememberedMaps.set(bundle.id, { file: bundle.file, sourceMaps: bundle.sourceMaps });
  };
  const runnersDir = join(options.workDir, "runners");
  const maxBundles = options.maxBundlesPerRunner ?? DEFAULT_MAX_BUNDLES;

  const spawnRunner = (memoryMb: number, hooks: RunnerHooks): RunnerProcess => {
    if (!readyEntry) throw new Error("The runner's files are not ready.");
    const dir = join(runnersDir, `r-${randomBytes(6).toString("hex")}`);
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    try {
      return new RunnerProcess({
        ...limited(spawnCommand(support, bwrap, readyEntry, dir, memoryMb, maxBundles, network, profiling), memoryMb),
        dir,
        memoryMb,
        logger: options.logger,
        exitsOnItsOwn: profiling !== null,
        ...hooks,
      });
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  };
  const pool = new RunnerPool({
    memoryBudgetMb: options.runnerMemoryMb ?? 1024,
    maxRunners: options.maxRunners ?? 512,
    maxPerOwner: options.maxRunnersPerOwner ?? Math.min(8, Math.max(2, availableParallelism())),
    busyBeforeSharing: options.busyRunnersBeforeSharing ?? BUSY_RUNNERS_PER_CORE * availableParallelism(),
    idleMs: options.idleMs ?? 60_000,
    spares: options.spares ?? 1,
    spareMemoryMb: options.spareMemoryMb ?? DEFAULT_LIMITS.memoryMb,
    spawn: spawnRunner,
    onLateFault: (fault) => lateFaultListener({ ...fault, error: mapSandboxError(fault.error, rememberedMaps.get(fault.bundleId) ?? { file: "component.cjs" }) }),
    logger: options.logger,
  });

  /** The runner's files and the egress proxy, once; then the spares start. */
  let prepared: Promise<void> | undefined;
  const prepare = async (): Promise<void> => {
    // Folders of runners a previous process left (it was killed): nothing uses them now.
    rmSync(runnersDir, { recursive: true, force: true });
    entry = prepareRunnerEntry(options.workDir);
    readyEntry = await entry;
    // Listening before the first runner starts, so that its first connection finds the socket.
    if (proxy) await (proxyStarted ??= proxy.start());
    pool.refillSpares();
  };

  const acquire = async (bundle: ComponentBundle, limits: Limits, exclusive: boolean): Promise<RunnerProcess | SandboxError> => {
    if (closed) throw new Error("The sandbox is closed.");
    // One preparation for all: a call that came while it was under way waits for the whole of it, proxy included.
    await (prepared ??= prepare());
    try {
      return await pool.acquire({ ownerId: bundle.ownerId, memoryMb: limits.memoryMb, bundle, exclusive });
    } catch (error) {
      return crashed((error as Error).message);
    }
  };

  /**
   * Runs a batch in one runner. `attempt`: "first"; "retry" for calls run
   * again because the runner they were in died (each answers on its own, no
   * held endings, on a runner no other batch shares, so that the call at
   * fault is the one that gets the error); a call cut short again is
   * not run a third time.
   */
  const executeBatch = async (requests: RunnerRequest[], callbacks: Array<InvokeCallbacks | undefined>, options: BatchOptions = {}, attempt: "first" | "retry" = "first"): Promise<InvokeResult[]> => {
    const first = requests[0];
    if (!first) return [];
    const limits = resolveLimits(first.limits);
    const retry = attempt === "retry";
    // A batch of one has nothing to hold its ending for.
    const held = !retry && options.concurrent !== true && requests.length > 1;
    remember(first.bundle);
    const runner = await acquire(first.bundle, limits, retry);
    if (!(runner instanceof RunnerProcess)) return requests.map(() => failed(runner));
    let answers: CallAnswer[];
    try {
      let bundleFile: string;
      try {
        bundleFile = runner.place(first.bundle);
      } catch (error) {
        return requests.map(() => failed(crashed(`The component's files could not be given to its runner: ${(error as Error).message}`)));
      }
      const started = performance.now();
      let last = started;
      // Calls of a batch mostly share one limits object: resolved once, not once per call.
      let given = first.limits;
      let resolved = limits;
      const resolvedOf = (partial: Limits): Limits => (partial === given ? resolved : ((given = partial), (resolved = resolveLimits(partial))));
      const calls = requests.map((request, index) => ({
        call: request.call,
        props: request.props,
        dbProps: request.dbProps,
        db: request.db,
        limits: resolvedOf(request.limits),
        onRespond: callbacks[index]?.onRespond?.bind(callbacks[index]),
        onStore: callbacks[index]?.onDataStore,
        onAuth: callbacks[index]?.onAuth,
        stopHandle: callbacks[index]?.stopHandle,
      }));
      answers = await Promise.all(
        runner.callEach(calls, { bundleFile, concurrent: options.concurrent === true, holdEnds: held }).map((promise, index) =>
          promise.then((answer): CallAnswer => {
            const now = performance.now();
            if (answer === null || answer === CUT_SHORT) return answer;
            callbacks[index]?.onEnded?.();
            // One after the other, a call took the time since the one before it; side by side, since the start.
            // The runner's own measure when it gave one: an ending it held arrived after the call ended.
            answer.ms ??= now - (options.concurrent ? started : last);
            last = now;
            return answer;
          }),
        ),
      );
    } finally {
      pool.release(runner);
    }
    const results: Array<InvokeResult | null | typeof CUT_SHORT> = answers.map((answer) => (answer === null || answer === CUT_SHORT ? answer : toResult(answer, Math.round(answer.ms ?? 0), first.bundle)));
    if (options.concurrent === true) return finishConcurrent(requests, callbacks, results, retry);
    return finishSequential(requests, callbacks, results, options, retry, held);
  };

  /** Side by side, each call is on its own: one cut short runs again alone, once. */
  const finishConcurrent = async (requests: RunnerRequest[], callbacks: Array<InvokeCallbacks | undefined>, results: Array<InvokeResult | null | typeof CUT_SHORT>, retry: boolean): Promise<InvokeResult[]> =>
    Promise.all(
      results.map(async (result, index) => {
        if (result !== null && result !== CUT_SHORT) return result;
        if (retry) return failed(result === CUT_SHORT ? cutShortTwice() : notStarted());
        const [again] = await executeBatch([requests[index]!], [callbacks[index]], {}, "retry");
        return again!;
      }),
    );

  /**
   * One after the other: the calls that answered stand, and the rest run again
   * from the store the last of them left, on a runner of their own. The call
   * at fault has its error; a call cut short by another batch's call runs
   * again once; calls that never ran run again.
   */
  const finishSequential = async (
    requests: RunnerRequest[],
    callbacks: Array<InvokeCallbacks | undefined>,
    results: Array<InvokeResult | null | typeof CUT_SHORT>,
    options: BatchOptions,
    retry: boolean,
    held: boolean,
  ): Promise<InvokeResult[]> => {
    const stranded = results.findIndex((result) => result === null || result === CUT_SHORT);
    if (stranded < 0) return results as InvokeResult[];
    const done = results.slice(0, stranded) as InvokeResult[];
    // The calls from `from` on, the first of them over the store the last call that answered left.
    const restFrom = (from: number) => requests.slice(from).map((request, index) => (index === 0 ? { ...request, db: lastDb(requests[0]!.db, done) } : request));
    const cutShort = results[stranded] === CUT_SHORT;
    if ((stranded === 0 && !held && !cutShort) || (cutShort && retry)) {
      // Not even the first call ran (the runner was gone already), or it was cut short a second time: say so rather than try forever.
      const error = failed(cutShort ? cutShortTwice() : notStarted());
      const rest = await executeBatch(restFrom(stranded + 1), callbacks.slice(stranded + 1), options, retry ? "retry" : "first");
      return [...done, error, ...rest];
    }
    return [...done, ...(await executeBatch(restFrom(stranded), callbacks.slice(stranded), options, "retry"))];
  };

  return {
    onLateFault(listener) {
      lateFaultListener = listener;
    },
    usage: () => pool.usage(),
    isolation: { permissionModel: support.permission !== null && profiling === null, bubblewrap: bwrap !== null, network: networkIsolation, memory: limiter.kind, pidsLimit: limiter.pidsLimit, cpuLimited: limiter.cpuLimited },
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
      await pool.close();
      if (proxyStarted) await proxyStarted.then(() => proxy?.close()).catch(() => undefined);
      limiter.close();
      if (entry) await (await entry.catch(() => undefined))?.dispose();
    },
  };
}

/** The store as the last call that answered left it. */
function lastDb(initial: DbSnapshot, done: InvokeResult[]): DbSnapshot {
  let db = initial;
  for (const result of done) if (result.db) db = result.db;
  return db;
}

function crashed(message: string): SandboxError {
  return { code: "RunnerCrashed", name: "RunnerCrashed", message };
}

function failed(error: SandboxError): InvokeResult {
  return { ok: false, emits: [], db: null, logs: [], error, durationMs: 0 };
}

function notStarted(): SandboxError {
  return crashed("The runner stopped before the call could start; try again.");
}

function cutShortTwice(): SandboxError {
  return crashed("The runner stopped while this call ran, twice, each time taken down by another call it shared the runner with; try again.");
}
