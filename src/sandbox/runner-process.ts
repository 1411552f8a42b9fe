/**
 * The host's handle on one runner process: spawns it, places the bundles it
 * runs in its folder, sends it batches of calls (several at once: each batch
 * is a lane of its own, see runner/lane.ts), enforces each call's time limit,
 * and turns the process's death into the calls' errors: the call at fault
 * gets the error, and calls that were only caught in the same runner are
 * told so (CUT_SHORT), for the sandbox to run them again elsewhere. Every
 * listener hangs on the child and goes with it; nothing is added to the
 * host's own process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import type { Socket } from "node:net";
import type { Readable } from "node:stream";
import type { Logger } from "pino";
import { placeBundle } from "./bundle-placement.js";
import { CallCollector, type AuthRefreshHandler, type CallEnding, type CallOutcome, type DataStoreHandler } from "./call-collector.js";
import { classifyExit, type StopReason } from "./exit-classification.js";
import type { HttpResponse } from "./http-response.js";
import { MAX_LOG_ENTRIES, RUNNER_START_LIMIT_MS, type Limits } from "./limits.js";
import { readRunnerMessage, type CallMessage, type DbSnapshot, type HostMessage, type LogStream, type RunnerCall, type StepOutcome, type StepsCallWithoutSteps } from "./protocol.js";
import { CHANNEL_FD } from "./runner/channel.js";
import { encodeFrame, FrameReader } from "./runner/frames.js";
import { JOURNAL_FD } from "./runner/journal.js";
import { RunnerJournal } from "./runner-journal.js";
import type { RunnerResources } from "./resources/resource-limiter.js";
import type { SandboxError } from "./sandbox-error.js";
import { ChurningMap, ChurningSet } from "../domain/churning-map.js";

export interface SpawnCommand {
  command: string;
  args: string[];
  cwd: string;
  /**
   * Set for a wrapper (bwrap): the descriptor on which it writes the pid of
   * the process it started, {"child-pid": N}. Stopping kills that one, and
   * the wrapper exits and reaps it; killing the wrapper first would leave
   * its child an orphan for the machine's init to reap.
   */
  childPidFd?: number;
  /**
   * Set by the wrapper that bounds the size of the files the runner writes
   * (resource-limiter.ts): only then is it given a journal (runner/journal.ts).
   */
  fileSizeLimited?: boolean;
}

export interface RunnerProcessOptions {
  command: SpawnCommand;
  /** The runner's cgroups (or rlimit): told whether they killed it, released once it is gone. */
  resources?: RunnerResources | undefined;
  /** The runner's own folder, which it may read: the bundles it runs are placed in it (bundle-placement.ts). Removed when it is gone. */
  dir: string;
  memoryMb: number;
  logger: Logger | undefined;
  /**
   * Stopped when idle, evicted or closing, the runner exits on its own (its
   * channel is closed, and it exits as it does when the host is gone) rather
   * than by SIGKILL: the profiling mode's profile is written at a normal exit
   * only (cpu-profile.ts). SIGKILL follows if it has not gone within
   * PROFILE_EXIT_GRACE_MS.
   */
  exitsOnItsOwn?: boolean;
  /** How long it may take to start (RunnerReady); RUNNER_START_LIMIT_MS unless set. */
  startLimitMs?: number;
  /** Called once, when the process is gone. */
  onExit(runner: RunnerProcess): void;
  /**
   * The runner reported a fault between calls (a timer left by an earlier
   * call threw): replace it. `error` says what failed, `bundleId` whose
   * code it was, when the runner could tell.
   */
  onFault(runner: RunnerProcess, error: SandboxError, bundleId: string | undefined): void;
}

/**
 * A call that ran in part and was cut short because another call in the same
 * runner took it down (or because which call did cannot be told): it may run
 * once more, elsewhere.
 */
export const CUT_SHORT = "cut-short";

/** A call's answer: its outcome; null when it never ran (or whether it ran cannot be told); CUT_SHORT. */
export type CallAnswer = CallOutcome | null | typeof CUT_SHORT;

export interface CallRequest {
  call: RunnerCall;
  props: Record<string, unknown>;
  dbProps: string[];
  db: DbSnapshot;
  limits: Limits;
  onRespond: ((response: HttpResponse) => void) | undefined;
  /** Carries out the call's data store requests; without one, they fail. */
  onStore?: DataStoreHandler | undefined;
  /** Carries out the call's `$auth.refresh()`; without one, it fails. */
  onAuth?: AuthRefreshHandler | undefined;
  /** Given a function that tells the runner to start no further step of this `steps` call (its run was cancelled). */
  stopHandle?: { stop?: () => void } | undefined;
}

const STDERR_TAIL_CHARS = 8192;
/** After 'exit', how long to wait for the pipes to close (and the last stderr to arrive). */
const CLOSE_GRACE_MS = 1000;
/** How long a wrapper gets to exit after its child was killed, before it is killed too. */
const WRAPPER_GRACE_MS = 500;
/** How long a cancelled call's step gets to stop where it awaits before its runner is stopped (it never yields). */
const CANCEL_GRACE_MS = 2000;
/** How long a runner that exits on its own gets to write its CPU profile (a large one takes a while). */
const PROFILE_EXIT_GRACE_MS = 10_000;
/** Stops that take no call down: a runner may exit on its own for them. */
const QUIET_STOPS = new Set<StopReason>(["idle", "evict", "close"]);
/** Errors after which the runner's state cannot be trusted, whatever it says. */
const RETIRING_CODES = new Set<SandboxError["code"]>(["OutputFlood", "ProcessExit", "UnhandledRejection"]);
/** Raw output a runner may write while it has no call (a timer left behind that prints): past it, the runner is stopped. */
const IDLE_RAW_OUTPUT_BYTES = 1024 * 1024;

/** The calls of one batch sent to the runner, as the host follows them. */
interface HostLane {
  /** Calls not yet answered, in order; in a sequential lane the runner works on the first. */
  calls: Pending[];
  /** Its calls run side by side, each on its own clock (then the lane holds one call). */
  concurrent: boolean;
  /** The runner may hold the endings of the lane's calls (callEach's `holdEnds`). */
  holding: boolean;
  /** The time limit of the first call. */
  timer: NodeJS.Timeout | undefined;
}

interface Pending {
  collector: CallCollector;
  lane: HostLane;
  resolve(answer: CallAnswer): void;
}

export class RunnerProcess {
  readonly memoryMb: number;
  readonly pid: number | undefined;
  readonly dir: string;
  /** Resolves once the process is gone. */
  readonly exited: Promise<void>;
  private readonly options: RunnerProcessOptions;
  private readonly child: ChildProcess;
  /** The wire to the runner (frames on its descriptor 3); nothing else it writes is read as a message. */
  private readonly channel: Socket;
  private readonly reader: FrameReader;
  /** Bytes read from the channel: where in its stream the journal's frames continue it (runner/journal.ts). */
  private received = 0;
  /** Where the runner keeps its reports until it writes them (runner/journal.ts); only under a file-size bound. */
  private readonly journal: RunnerJournal | undefined;
  /** Set while what the journal held is read, after the runner is gone: only reports count (onRecovered). */
  private recovering = false;
  /** What was wrong with what the runner sent, when it broke the protocol. */
  private violation: string | undefined;
  private idleRawBytes = 0;
  /** Whether its cgroup's OOM killer took it: read once, when it is gone, before its cgroups go. */
  private memoryKilled = false;
  private alive = true;
  /** The runner said it is set up (RunnerReady): calls' clocks start only then. */
  private started = false;
  private readonly startLimitMs: number;
  private readonly startLimit: NodeJS.Timeout;
  private stoppedBy: StopReason | undefined;
  private spawnError: Error | undefined;
  private stderrTail = "";
  private innerPid: number | undefined;
  private nextId = 1;
  private nextLane = 1;
  private readonly calls = new ChurningMap<number, Pending>();
  private readonly lanes = new ChurningSet<HostLane>();
  /** The call whose doing stopped the runner (past its time or log limit, or it retired it), when known. */
  private culprit: CallCollector | undefined;
  /** A fault the runner reported with calls in progress, none of which it could name. */
  private unownedFault: SandboxError | undefined;
  /** While the calls of one runner message are read: lanes whose next call's clock is to start after. */
  private readingBatch = false;
  private readonly clocksDue = new ChurningSet<HostLane>();
  /** Bundles placed in the runner's folder: the bundle's id by the path the runner loads. */
  private readonly placed = new Map<string, string>();
  private readonly placedByFile = new Map<string, string>();
  private markExited: () => void = () => {};

  constructor(options: RunnerProcessOptions) {
    this.options = options;
    this.memoryMb = options.memoryMb;
    this.dir = options.dir;
    this.exited = new Promise((resolve) => (this.markExited = resolve));
    const { command, args, cwd, childPidFd, fileSizeLimited } = options.command;
    const stdio: Array<"ignore" | "pipe" | number> = ["ignore", "pipe", "pipe", "pipe"];
    if (childPidFd !== undefined) stdio[childPidFd] = "pipe";
    this.journal = fileSizeLimited ? RunnerJournal.create(options.dir) : undefined;
    if (this.journal) {
      for (let fd = stdio.length; fd < JOURNAL_FD; fd++) stdio[fd] = "ignore";
      stdio[JOURNAL_FD] = this.journal.fd;
    }
    // An empty environment: nothing of the server's (keys, database URLs) reaches user code.
    try {
      this.child = spawn(command, args, { cwd, env: {}, stdio });
    } finally {
      this.journal?.closeDescriptor();
    }
    this.pid = this.child.pid;
    this.channel = this.child.stdio[CHANNEL_FD] as Socket;
    this.reader = new FrameReader({ onMessage: (raw) => this.onMessage(raw), onMalformed: (reason) => this.onViolation(reason) });
    this.startLimitMs = options.startLimitMs ?? RUNNER_START_LIMIT_MS;
    this.startLimit = setTimeout(() => void this.stop("start"), this.startLimitMs);
    this.listen();
  }

  get isAlive(): boolean {
    return this.alive;
  }

  /** The process whose memory is the runner's: node itself, inside its wrapper when there is one. */
  get nodePid(): number | undefined {
    return this.innerPid ?? (this.options.command.childPidFd === undefined ? this.pid : undefined);
  }

  /**
   * The path at which the runner loads `bundle`: its folder copied (hard
   * links where it can) into the runner's own folder, once per runner.
   * Throws when it cannot be placed.
   */
  place(bundle: { id: string; file: string }): string {
    const known = this.placedByFile.get(bundle.file);
    if (known) return known;
    const file = placeBundle(this.dir, bundle.file);
    this.placedByFile.set(bundle.file, file);
    this.placed.set(file, bundle.id);
    return file;
  }

  /**
   * Sends a batch of calls of one bundle (placed at `bundleFile`) at once, as
   * a lane of its own; other lanes may be in progress in the same runner.
   * The runner runs them one after the other, each over the store the
   * previous one left (only the first call's `db` is sent). Sending them
   * together spares the runner and the host from waiting on each other
   * between calls. One promise per call, each settling as soon as its call
   * answers: null when it never ran because the runner died or retired
   * before it, CUT_SHORT when another call took the runner down.
   *
   * `concurrent`: independent calls (each with its own db) that the runner
   * runs side by side, each on its own clock. `holdEnds` (one after the other
   * only): the runner answers the batch in one message; if it dies before,
   * no call of the batch left unanswered can be told to have run or not, so
   * they all answer null.
   */
  callEach(requests: CallRequest[], options: { bundleFile: string; concurrent?: boolean; holdEnds?: boolean }): Array<Promise<CallAnswer>> {
    if (!this.alive) return requests.map(() => Promise.resolve(null));
    const concurrent = options.concurrent === true && requests.length > 1;
    const holding = options.holdEnds === true && !concurrent && requests.length > 1;
    const laneId = this.nextLane++;
    const shared: HostLane = { calls: [], concurrent: false, holding, timer: undefined };
    const sentLanes: HostLane[] = concurrent ? [] : [shared];
    const { props, dbProps } = requests[0]!;
    // The runs of one workflow share their steps (one array): sent once, in `shared`.
    const firstCall = requests[0]!.call;
    const sharedSteps = requests.length > 1 && firstCall.kind === "steps" ? firstCall.steps : undefined;
    const invokes: BatchInvoke[] = [];
    const answers: Array<Promise<CallAnswer>> = [];
    for (let index = 0; index < requests.length; index++) {
      const request = requests[index]!;
      const collector = new CallCollector(this.nextId++, request.limits, request.onRespond, this.options.logger, request.onStore, request.onAuth);
      if (request.stopHandle) request.stopHandle.stop = () => this.stopChain(collector);
      const lane: HostLane = concurrent ? { calls: [], concurrent: true, holding: false, timer: undefined } : shared;
      this.lanes.add(lane);
      if (concurrent) sentLanes.push(lane);
      answers.push(
        new Promise<CallAnswer>((resolve) => {
          const pending: Pending = { collector, lane, resolve };
          lane.calls.push(pending);
          this.calls.set(collector.id, pending);
        }),
      );
      const invoke: BatchInvoke = {
        type: "invoke",
        id: collector.id,
        call: sharedSteps && request.call.kind === "steps" && request.call.steps === sharedSteps ? withoutSteps(request.call) : request.call,
        db: index === 0 || concurrent ? request.db : {},
        carryDb: index > 0 && !concurrent,
        maxLogBytes: request.limits.maxLogBytes,
        maxLogEntries: MAX_LOG_ENTRIES,
      };
      if (concurrent) invoke.concurrent = true;
      if (holding) invoke.holdEnd = true;
      // Props shared by the calls of a batch (the common case) travel once, in `shared`.
      if (request.props !== props) invoke.props = request.props;
      if (request.dbProps !== dbProps) invoke.dbProps = request.dbProps;
      invokes.push(invoke);
    }
    // One message for the whole batch: one write, one parse.
    const message: HostMessage =
      invokes.length === 1
        ? // Object.assign, not a leading spread: one per batch of calls (see domain/own-copy.ts).
          Object.assign(invokes[0]!, { call: requests[0]!.call, props, dbProps, bundle: options.bundleFile, lane: laneId })
        : { type: "invoke-many", shared: { props, dbProps, bundle: options.bundleFile, lane: laneId, ...(sharedSteps ? { steps: sharedSteps } : {}) }, invokes };
    this.post(message, (error) => {
      const failure = `The calls could not be sent to the runner: ${error.message}`;
      for (const lane of sentLanes) {
        const first = lane.calls[0]?.collector;
        if (first) this.finish(first, { ok: false, error: { code: "RunnerCrashed", name: "RunnerCrashed", message: failure }, db: null }, true);
      }
    });
    for (const lane of sentLanes) this.startClock(lane);
    return answers;
  }

  /**
   * Tells the runner to start no further step of a cancelled `steps` call; a
   * step that awaits stops there. One that never yields (a busy loop) cannot
   * hear it: once the call is the one running and has had CANCEL_GRACE_MS,
   * the runner is stopped, as at its time limit, rather than keeping the
   * cancelled run (and the runner) busy until then. Other calls the runner
   * had are cut short and run again elsewhere.
   */
  private stopChain(collector: CallCollector): void {
    if (!this.alive || !this.calls.has(collector.id)) return;
    this.post({ type: "stop-chain", id: collector.id });
    const check = (): void => {
      const pending = this.calls.get(collector.id);
      if (!this.alive || !pending) return;
      // Waiting behind another call of its lane, it has not started: the runner skips it when its turn comes.
      if (pending.lane.calls[0] !== pending) return void setTimeout(check, CANCEL_GRACE_MS).unref();
      this.culprit ??= collector;
      void this.stop("cancel");
    };
    setTimeout(check, CANCEL_GRACE_MS).unref();
  }

  /** SIGKILL: user code gets no chance to delay it (except quiet stops in the profiling mode, see exitsOnItsOwn). Resolves once the process is gone. */
  stop(reason: StopReason): Promise<void> {
    if (!this.alive) return this.exited;
    this.stoppedBy ??= reason;
    if (this.options.exitsOnItsOwn && QUIET_STOPS.has(reason)) {
      this.channel.end();
      const fallback = setTimeout(() => this.kill(), PROFILE_EXIT_GRACE_MS);
      return this.exited.finally(() => clearTimeout(fallback));
    }
    return this.kill();
  }

  /** SIGKILL, to node itself inside its wrapper when there is one. */
  private kill(): Promise<void> {
    if (this.innerPid === undefined) {
      this.child.kill("SIGKILL");
      return this.exited;
    }
    try {
      process.kill(this.innerPid, "SIGKILL");
    } catch {
      // Already gone: the wrapper is exiting on its own.
    }
    const fallback = setTimeout(() => this.child.kill("SIGKILL"), WRAPPER_GRACE_MS);
    return this.exited.finally(() => clearTimeout(fallback));
  }

  private post(message: HostMessage, onError?: (error: Error) => void): void {
    let frame: Buffer;
    try {
      frame = encodeFrame(message);
    } catch (error) {
      // A value that cannot be serialized (a BigInt, a cycle in props): reported as the call's failure.
      onError?.(error as Error);
      return;
    }
    if (this.channel.destroyed) return onError?.(new Error("the runner's channel is closed"));
    this.channel.write(frame, (error) => {
      if (error && this.alive) onError?.(error);
    });
  }

  /**
   * The runner sent what is not a message: its code wrote to the channel's
   * descriptor. Nothing more it sends can be trusted to be in step, so it
   * is stopped; its calls fail saying why (classifyExit).
   */
  private onViolation(reason: string): void {
    if (!this.alive || this.violation !== undefined) return;
    this.violation = reason;
    this.options.logger?.warn({ pid: this.pid, reason }, "sandbox: a runner broke the wire protocol (its code wrote to the runner's channel); it was stopped");
    void this.stop("protocol");
  }

  private listen(): void {
    const child = this.child;
    this.channel.on("data", (chunk: Buffer) => {
      this.received += chunk.length;
      this.reader.push(chunk);
    });
    // A channel that ends while the process lives on (its code closed descriptor 3) leaves the runner unreachable: it goes.
    // A dying process ends its channel too, just before its exit is seen: that is the exit's business.
    this.channel.on("end", () => setTimeout(() => this.onViolation("the runner closed its channel"), CLOSE_GRACE_MS).unref());
    // Write errors after the runner died are the exit's business, reported there.
    this.channel.on("error", () => undefined);
    child.stdout?.setEncoding("utf8").on("data", (text: string) => this.onRawOutput("stdout", text));
    child.stderr?.setEncoding("utf8").on("data", (text: string) => this.onRawOutput("stderr", text));
    const childPidFd = this.options.command.childPidFd;
    const info = childPidFd === undefined ? undefined : (child.stdio[childPidFd] as Readable | null | undefined);
    if (info) {
      let text = "";
      info.setEncoding("utf8").on("data", (chunk: string) => {
        if (this.innerPid !== undefined || text.length > 4096) return;
        text += chunk;
        const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
        if (match) this.innerPid = Number(match[1]);
      });
    }
    child.on("error", (error) => {
      if (child.pid !== undefined) return this.options.logger?.debug({ err: error, pid: child.pid }, "sandbox: runner process error");
      this.spawnError = error;
      this.onGone(null, null);
    });
    child.once("exit", (code, signal) => {
      const grace = setTimeout(() => this.onGone(code, signal), CLOSE_GRACE_MS);
      child.once("close", () => {
        clearTimeout(grace);
        this.onGone(code, signal);
      });
    });
  }

  private onMessage(raw: unknown): void {
    if (this.recovering) return this.onRecovered(raw);
    if (this.violation !== undefined) return;
    const message = readRunnerMessage(raw);
    if (!message) return this.onViolation("a frame held a message of no known shape");
    if (message.type === "ready") return this.onStarted();
    if (message.type === "batch") {
      // A batch's endings arrive together: the next call's clock starts once, after them all.
      this.readingBatch = true;
      try {
        for (const item of message.messages) this.onCallMessage(item);
      } finally {
        this.readingBatch = false;
        for (const lane of this.clocksDue.values()) this.startClock(lane);
      }
      return;
    }
    this.onCallMessage(message);
  }

  private onCallMessage(message: CallMessage): void {
    if (message.id === null) return message.type === "error" ? this.onFaultMessage(message.error, message.bundle, message.inFlight === true) : undefined;
    const collector = this.calls.get(message.id)?.collector;
    if (!collector || collector.finished) return;
    switch (message.type) {
      case "log": {
        const flood = collector.addLog(message.stream, message.text, message.ts);
        if (flood) this.finish(collector, { ok: false, error: flood, db: null }, true);
        return;
      }
      case "emit":
        return collector.addEmit(message.event, message.meta);
      case "step-done":
        return collector.addStepDone(message.done);
      case "store": {
        const { id, req } = message;
        return collector.storeRequest(message.store, message.request, (answer) => {
          if (this.alive) this.post({ type: "store-reply", id, req, ...answer });
        });
      }
      case "auth": {
        const { id, req } = message;
        return collector.authRequest(message.account, message.stale, (answer) => {
          if (this.alive) this.post({ type: "store-reply", id, req, ...answer });
        });
      }
      case "respond":
        return collector.respond(message.response);
      case "result":
        return this.finish(collector, withStep({ ok: true, value: message.value, db: message.db }, message), message.retire);
      case "error":
        return this.finish(collector, withStep({ ok: false, error: message.error, db: message.db }, message), message.retire || RETIRING_CODES.has(message.error.code));
    }
  }

  /**
   * A fault no call owns. Between calls: work a call left behind failed, so
   * the runner is to be replaced (the pool lets its calls in progress end
   * first). With calls in progress whose code it was cannot be told: the
   * runner goes now, and onGone decides who is told what.
   */
  private onFaultMessage(error: SandboxError, bundleFile: string | undefined, inFlight: boolean): void {
    if (!inFlight) {
      this.options.logger?.debug({ pid: this.pid, error }, "sandbox: runner fault between calls");
      return this.options.onFault(this, error, bundleFile === undefined ? undefined : this.placed.get(bundleFile));
    }
    this.unownedFault ??= error;
    void this.stop("retire");
  }

  /**
   * Output written straight to descriptors 1 and 2, past the runner's
   * capture: it counts toward the log limit of the call in progress and
   * stops it past it, as console floods do. When no call or several are in
   * progress, whose it is cannot be told: past IDLE_RAW_OUTPUT_BYTES the
   * runner is stopped.
   */
  private onRawOutput(stream: LogStream, text: string): void {
    if (stream === "stderr") this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
    const running = this.runningCalls();
    const collector = running.length === 1 ? running[0] : undefined;
    if (collector) {
      const flood = collector.addRawOutput(stream, text);
      if (flood) this.finish(collector, { ok: false, error: flood, db: null }, true);
      return;
    }
    this.idleRawBytes += text.length;
    if (this.idleRawBytes > IDLE_RAW_OUTPUT_BYTES && this.alive) {
      this.options.logger?.debug({ pid: this.pid }, "sandbox: a runner wrote past its output limit outside any one call; it was stopped");
      void this.stop("flood");
    }
  }

  /** The calls the runner is working on: the first of each lane. */
  private runningCalls(): CallCollector[] {
    const running: CallCollector[] = [];
    for (const lane of this.lanes) {
      const head = lane.calls[0];
      if (head && !head.collector.finished) running.push(head.collector);
    }
    return running;
  }

  private finish(collector: CallCollector, ending: CallEnding, retire: boolean): void {
    const pending = this.calls.get(collector.id);
    if (collector.finished || !pending) return;
    const lane = pending.lane;
    const index = lane.calls.indexOf(pending);
    collector.finished = true;
    // The call that retires the runner with its own error is the one at fault; the others are only caught.
    if (retire && this.alive) this.culprit ??= collector;
    // Calls of a lane end in order; one that ends out of turn (a send failure) takes those before it down too.
    const ended = lane.calls.splice(0, index + 1);
    for (const done of ended) this.calls.delete(done.collector.id);
    clearTimeout(lane.timer);
    lane.timer = undefined;
    const answer = (): void => {
      for (const earlier of ended.slice(0, -1)) earlier.resolve(null);
      pending.resolve(collector.outcome(ending));
      if (!this.alive || retire) return this.dropLane(lane);
      if (lane.calls.length === 0) this.lanes.delete(lane);
      else if (this.readingBatch) this.clocksDue.add(lane);
      else this.startClock(lane);
    };
    // A retired runner is gone before the call answers, so the pool never counts a dying process as free.
    if (retire && this.alive) void this.stop("retire").then(answer);
    else answer();
  }

  /** Calls sent while the runner was starting get their clocks now (a second "ready" changes nothing). */
  private onStarted(): void {
    if (this.started) return;
    this.started = true;
    clearTimeout(this.startLimit);
    for (const lane of this.lanes) this.startClock(lane);
  }

  /** A lane's first waiting call's time limit starts when it becomes the first, once the runner has started. */
  private startClock(lane: HostLane): void {
    this.clocksDue.delete(lane);
    const head = lane.calls[0];
    if (!head || lane.timer !== undefined || !this.started) return;
    lane.timer = setTimeout(() => {
      this.culprit ??= head.collector;
      void this.stop("timeout");
    }, head.collector.limits.timeoutMs);
  }

  /** Calls of a lane behind one that killed the runner never ran: they answer null, for the caller to run elsewhere. */
  private dropLane(lane: HostLane): void {
    clearTimeout(lane.timer);
    for (const pending of lane.calls.splice(0)) {
      pending.collector.finished = true;
      this.calls.delete(pending.collector.id);
      pending.resolve(null);
    }
    this.lanes.delete(lane);
  }

  private exitError(limits: Limits, code = this.child.exitCode, signal = this.child.signalCode): SandboxError {
    const { stderrTail, stoppedBy, spawnError, memoryMb, violation, memoryKilled, startLimitMs } = this;
    const wholeLimitMb = this.options.resources?.memoryLimitMb;
    const addressSpaceLimited = this.options.resources?.addressSpaceLimited;
    return classifyExit({ code, signal, stderrTail, stoppedBy, spawnError, timeoutMs: limits.timeoutMs, startLimitMs, memoryMb, violation, memoryKilled, wholeLimitMb, addressSpaceLimited });
  }

  /**
   * The runner is gone with calls unfinished: the reports it journaled and
   * never wrote (a step's end, with its logs) reach their calls now, so that
   * a step that never returned takes nothing reported before it with it.
   * Endings and requests are not taken from it: the calls end as the
   * runner's death decides (onGone).
   */
  private recoverJournal(): void {
    if (!this.journal || this.violation !== undefined || !this.lanes.values().some((lane) => lane.calls.length > 0)) return;
    const rest = this.journal.unreceived(this.received);
    if (!rest) return;
    this.recovering = true;
    try {
      // A gap (bytes the runner never wrote) leaves the reader mid-frame: the journal's frames are read afresh.
      const reader = rest.continues ? this.reader : new FrameReader({ onMessage: (raw) => this.onRecovered(raw), onMalformed: () => undefined });
      reader.push(rest.bytes);
    } catch {
      // A journal the runner's code wrote over is worth nothing; the calls end as they would have without it.
    } finally {
      this.recovering = false;
    }
  }

  private onRecovered(raw: unknown): void {
    const message = readRunnerMessage(raw);
    if (!message) return;
    const reports = message.type === "batch" ? message.messages : [message];
    for (const report of reports) {
      if (report.type === "step-done" || report.type === "log" || report.type === "emit" || report.type === "respond") this.onCallMessage(report);
    }
  }

  /**
   * The runner is gone. The call at fault gets the error; when it is not
   * known and only one call was running, that one is taken to be at fault
   * (as the runner's only call, it is). Every other call that was running is
   * CUT_SHORT, calls waiting behind them never ran (null), and the calls of
   * a lane whose endings the runner held cannot be told apart (null).
   */
  private onGone(code: number | null, signal: NodeJS.Signals | null): void {
    if (!this.alive) return;
    this.alive = false;
    this.recoverJournal();
    clearTimeout(this.startLimit);
    this.memoryKilled = this.options.resources?.outOfMemory() ?? false;
    const lanes = this.lanes.values();
    const running = lanes.filter((lane) => !lane.holding && lane.calls[0] && !lane.calls[0].collector.finished);
    const holdingLanes = lanes.filter((lane) => lane.holding && lane.calls.length > 0);
    const onlyOne = running.length + holdingLanes.length === 1;
    for (const lane of lanes) {
      clearTimeout(lane.timer);
      const head = lane.calls[0];
      if (!lane.holding && head && !head.collector.finished) {
        // A runner that never started ran no call's code: each call gets that error rather than a run elsewhere, on a machine that could not start this one.
        const atFault = this.culprit === head.collector || (this.culprit === undefined && onlyOne) || this.stoppedBy === "start";
        if (atFault) {
          const error = this.culprit === undefined && this.unownedFault ? this.unownedFault : this.exitError(head.collector.limits, code, signal);
          this.finish(head.collector, { ok: false, error, db: null }, false);
        } else {
          head.collector.finished = true;
          lane.calls.shift();
          this.calls.delete(head.collector.id);
          head.resolve(CUT_SHORT);
        }
      }
      this.dropLane(lane);
    }
    this.options.resources?.release();
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch {
      // Left for the next start's clean-up of the work folder; nothing depends on it.
    }
    this.markExited();
    this.options.onExit(this);
  }
}

type BatchInvoke = Extract<HostMessage, { type: "invoke-many" }>["invokes"][number];
type StepsCall = Extract<RunnerCall, { kind: "steps" }>;

/** A steps call as an invoke of a batch carries it: its steps are the batch's. */
function withoutSteps(call: StepsCall): StepsCallWithoutSteps {
  const { steps: _steps, ...rest } = call;
  return rest;
}

/** A step call's record joins its ending; set, not spread: this runs once per call. */
function withStep(ending: CallEnding, message: { step?: StepOutcome; ms?: number }): CallEnding {
  if (message.step) ending.step = message.step;
  if (message.ms !== undefined) ending.ms = message.ms;
  return ending;
}
