/**
 * The host's handle on one runner process: spawns it, sends it calls one at a
 * time, enforces each call's time limit, and turns the process's death into
 * the call's error. Every listener hangs on the child and goes with it;
 * nothing is added to the host's own process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import type { Readable } from "node:stream";
import type { Logger } from "pino";
import { CallCollector, type CallEnding, type CallOutcome } from "./call-collector.js";
import { classifyExit, type StopReason } from "./exit-classification.js";
import type { HttpResponse } from "./http-response.js";
import { MAX_LOG_ENTRIES, type Limits } from "./limits.js";
import { readRunnerMessage, type CallMessage, type DbSnapshot, type HostMessage, type LogStream, type RunnerCall, type StepOutcome } from "./protocol.js";
import { CHANNEL_FD } from "./runner/channel.js";
import { encodeFrame, FrameReader } from "./runner/frames.js";
import type { RunnerResources } from "./resources/resource-limiter.js";
import type { SandboxError } from "./sandbox-error.js";

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
}

export interface RunnerProcessOptions {
  command: SpawnCommand;
  /** The runner's cgroups (or rlimit): told whether they killed it, released once it is gone. */
  resources?: RunnerResources | undefined;
  /** The bundle to load; absent for a spare, which gets one later (adopt). */
  bundleFile?: string | undefined;
  memoryMb: number;
  logger: Logger | undefined;
  /** Called once, when the process is gone. */
  onExit(runner: RunnerProcess): void;
  /** The runner reported a fault between calls (a timer left by an earlier call threw): replace it. `error` says what failed. */
  onFault(runner: RunnerProcess, error?: SandboxError): void;
}

export interface CallRequest {
  call: RunnerCall;
  props: Record<string, unknown>;
  dbProps: string[];
  db: DbSnapshot;
  limits: Limits;
  onRespond: ((response: HttpResponse) => void) | undefined;
}

const STDERR_TAIL_CHARS = 8192;
/** After 'exit', how long to wait for the pipes to close (and the last stderr to arrive). */
const CLOSE_GRACE_MS = 1000;
/** How long a wrapper gets to exit after its child was killed, before it is killed too. */
const WRAPPER_GRACE_MS = 500;
/** Errors after which the runner's state cannot be trusted, whatever it says. */
const RETIRING_CODES = new Set<SandboxError["code"]>(["OutputFlood", "ProcessExit", "UnhandledRejection"]);
/** Raw output a runner may write while it has no call (a timer left behind that prints): past it, the runner is stopped. */
const IDLE_RAW_OUTPUT_BYTES = 1024 * 1024;

export class RunnerProcess {
  readonly memoryMb: number;
  readonly pid: number | undefined;
  /** Resolves once the process is gone. */
  readonly exited: Promise<void>;
  private readonly options: RunnerProcessOptions;
  private readonly child: ChildProcess;
  /** The wire to the runner (frames on its descriptor 3); nothing else it writes is read as a message. */
  private readonly channel: Socket;
  private readonly reader: FrameReader;
  /** What was wrong with what the runner sent, when it broke the protocol. */
  private violation: string | undefined;
  private idleRawBytes = 0;
  /** Whether its cgroup's OOM killer took it: read once, when it is gone, before its cgroups go. */
  private memoryKilled = false;
  private alive = true;
  private stoppedBy: StopReason | undefined;
  private spawnError: Error | undefined;
  private stderrTail = "";
  private innerPid: number | undefined;
  private nextId = 1;
  /** Calls sent and not yet answered, in order; the runner works on the first. */
  private readonly calls: Array<{ collector: CallCollector; resolve(outcome: CallOutcome | null): void }> = [];
  /** The time limit of the first call. */
  private timer: NodeJS.Timeout | undefined;
  /** The batch in flight runs its calls side by side (callEach's `concurrent`), each on its own clock. */
  private concurrent = false;
  /** The runner may hold the endings of the batch in flight (callEach's `holdEnds`). */
  private holding = false;
  /** While the calls of one runner message are read, and whether the first waiting call's clock is to start after. */
  private readingBatch = false;
  private clockDue = false;
  private readonly clocks = new Map<CallCollector, NodeJS.Timeout>();
  private timedOut: CallCollector | undefined;
  private markExited: () => void = () => {};

  constructor(options: RunnerProcessOptions) {
    this.options = options;
    this.memoryMb = options.memoryMb;
    this.exited = new Promise((resolve) => (this.markExited = resolve));
    const { command, args, cwd, childPidFd } = options.command;
    const stdio: Array<"ignore" | "pipe"> = ["ignore", "pipe", "pipe", "pipe"];
    if (childPidFd !== undefined) stdio[childPidFd] = "pipe";
    // An empty environment: nothing of the server's (keys, database URLs) reaches user code.
    this.child = spawn(command, args, { cwd, env: {}, stdio });
    this.pid = this.child.pid;
    this.channel = this.child.stdio[CHANNEL_FD] as Socket;
    this.reader = new FrameReader({ onMessage: (raw) => this.onMessage(raw), onMalformed: (reason) => this.onViolation(reason) });
    this.listen();
    if (options.bundleFile) this.post({ type: "load", file: options.bundleFile });
  }

  /**
   * Gives a spare (started without a bundle) its bundle and its pool hooks.
   * The runner requires the file on its first call, as any runner does.
   */
  adopt(bundleFile: string, hooks: Pick<RunnerProcessOptions, "onExit" | "onFault">): void {
    this.options.onExit = hooks.onExit;
    this.options.onFault = hooks.onFault;
    this.post({ type: "load", file: bundleFile });
  }

  get isAlive(): boolean {
    return this.alive;
  }

  /** Runs one call; never rejects for anything the component or the process does. */
  async call(request: CallRequest): Promise<CallOutcome> {
    const [outcome] = await this.callMany([request]);
    return outcome ?? this.notRun(request);
  }

  /**
   * Sends several calls at once; the runner runs them one after the other,
   * each over the store the previous one left (only the first call's `db` is
   * sent). Sending them together spares the runner and the host from waiting
   * on each other between calls. A call answers null when it never ran
   * because the runner died or retired before it.
   */
  callMany(requests: CallRequest[]): Promise<Array<CallOutcome | null>> {
    return Promise.all(this.callEach(requests));
  }

  /**
   * As callMany, with one promise per call, each settling as soon as its call
   * answers. `concurrent`: independent calls (each with its own db) that the
   * runner runs side by side, each on its own clock; a call that runs past
   * its time limit stops the runner, and the calls beside it fail with it.
   * `holdEnds` (one after the other only): the runner answers the batch in
   * one message; if it dies before, no call of the batch left unanswered can
   * be told to have run or not, so they all answer null.
   */
  callEach(requests: CallRequest[], options: { concurrent?: boolean; holdEnds?: boolean } = {}): Array<Promise<CallOutcome | null>> {
    if (this.calls.length > 0) throw new Error("A runner serves one batch of calls at a time.");
    if (!this.alive) return requests.map(() => Promise.resolve(null));
    this.concurrent = options.concurrent === true && requests.length > 1;
    this.holding = options.holdEnds === true && !this.concurrent && requests.length > 1;
    const { props, dbProps } = requests[0]!;
    const invokes: BatchInvoke[] = [];
    const outcomes: Array<Promise<CallOutcome | null>> = [];
    for (let index = 0; index < requests.length; index++) {
      const request = requests[index]!;
      const collector = new CallCollector(this.nextId++, request.limits, request.onRespond, this.options.logger);
      outcomes.push(new Promise<CallOutcome | null>((resolve) => this.calls.push({ collector, resolve })));
      const invoke: BatchInvoke = {
        type: "invoke",
        id: collector.id,
        call: request.call,
        db: index === 0 || this.concurrent ? request.db : {},
        carryDb: index > 0 && !this.concurrent,
        maxLogBytes: request.limits.maxLogBytes,
        maxLogEntries: MAX_LOG_ENTRIES,
      };
      if (this.concurrent) invoke.concurrent = true;
      if (this.holding) invoke.holdEnd = true;
      // Props shared by the calls of a batch (the common case) travel once, in `shared`.
      if (request.props !== props) invoke.props = request.props;
      if (request.dbProps !== dbProps) invoke.dbProps = request.dbProps;
      invokes.push(invoke);
    }
    // One message for the whole batch: one write, one parse.
    const message: HostMessage = invokes.length === 1 ? { ...invokes[0]!, props, dbProps } : { type: "invoke-many", shared: { props, dbProps }, invokes };
    this.post(message, (error) => {
      const failure = `The calls could not be sent to the runner: ${error.message}`;
      const first = this.calls[0]?.collector;
      if (first) this.finish(first, { ok: false, error: { code: "RunnerCrashed", name: "RunnerCrashed", message: failure }, db: null }, true);
    });
    this.startClock();
    return outcomes;
  }

  private notRun(request: CallRequest): CallOutcome {
    const collector = new CallCollector(0, request.limits, undefined, this.options.logger);
    return collector.outcome({ ok: false, error: this.exitError(request.limits), db: null });
  }

  /** SIGKILL: user code gets no chance to delay it. Resolves once the process is gone. */
  stop(reason: StopReason): Promise<void> {
    if (!this.alive) return this.exited;
    this.stoppedBy ??= reason;
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
    this.channel.on("data", (chunk: Buffer) => this.reader.push(chunk));
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
    if (this.violation !== undefined) return;
    const message = readRunnerMessage(raw);
    if (!message) return this.onViolation("a frame held a message of no known shape");
    if (message.type === "batch") {
      // A batch's endings arrive together: the next call's clock starts once, after them all.
      this.readingBatch = true;
      try {
        for (const item of message.messages) this.onCallMessage(item);
      } finally {
        this.readingBatch = false;
        if (this.clockDue) this.startClock();
      }
      return;
    }
    this.onCallMessage(message);
  }

  private onCallMessage(message: CallMessage): void {
    if (message.type === "error" && message.id === null) {
      this.options.logger?.debug({ pid: this.pid, error: message.error }, "sandbox: runner fault between calls");
      return this.options.onFault(this, message.error);
    }
    const collector = this.calls.find((pending) => pending.collector.id === message.id)?.collector;
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
      case "respond":
        return collector.respond(message.response);
      case "result":
        return this.finish(collector, withStep({ ok: true, value: message.value, db: message.db }, message), message.retire);
      case "error":
        return this.finish(collector, withStep({ ok: false, error: message.error, db: message.db }, message), message.retire || RETIRING_CODES.has(message.error.code));
    }
  }

  /**
   * Output written straight to descriptors 1 and 2, past the runner's
   * capture: it counts toward the call's log limit and stops the call past
   * it, as console floods do; between calls, past IDLE_RAW_OUTPUT_BYTES.
   */
  private onRawOutput(stream: LogStream, text: string): void {
    if (stream === "stderr") this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
    const collector = this.calls[0]?.collector;
    if (collector && !collector.finished) {
      const flood = collector.addRawOutput(stream, text);
      if (flood) this.finish(collector, { ok: false, error: flood, db: null }, true);
      return;
    }
    this.idleRawBytes += text.length;
    if (this.idleRawBytes > IDLE_RAW_OUTPUT_BYTES && this.alive) {
      this.options.logger?.debug({ pid: this.pid }, "sandbox: a runner wrote past its output limit between calls; it was stopped");
      void this.stop("flood");
    }
  }

  private finish(collector: CallCollector, ending: CallEnding, retire: boolean): void {
    const index = this.calls.findIndex((pending) => pending.collector === collector);
    if (collector.finished || index < 0) return;
    if (this.concurrent) return this.finishConcurrent(index, ending, retire);
    collector.finished = true;
    // Calls end in order; one that ends out of turn (a send failure) takes those before it down too.
    const ended = this.calls.splice(0, index + 1);
    clearTimeout(this.timer);
    const answer = (): void => {
      for (const pending of ended.slice(0, -1)) pending.resolve(null);
      ended[ended.length - 1]!.resolve(collector.outcome(ending));
      if (!this.alive || retire) this.dropWaiting();
      else if (this.readingBatch) this.clockDue = true;
      else this.startClock();
    };
    // A retired runner is gone before the call answers, so the pool never counts a dying process as free.
    if (retire && this.alive) void this.stop("retire").then(answer);
    else answer();
  }

  /** Concurrent calls end in any order; a retiring one takes the runner down, and the others with it (see onGone). */
  private finishConcurrent(index: number, ending: CallEnding, retire: boolean): void {
    const [pending] = this.calls.splice(index, 1);
    const { collector } = pending!;
    collector.finished = true;
    clearTimeout(this.clocks.get(collector));
    this.clocks.delete(collector);
    const answer = () => pending!.resolve(collector.outcome(ending));
    if (retire && this.alive) void this.stop("retire").then(answer);
    else answer();
  }

  /** The first waiting call's time limit starts when it becomes the first; concurrent calls each start theirs at once. */
  private startClock(): void {
    this.clockDue = false;
    if (this.concurrent) {
      for (const { collector } of this.calls) {
        this.clocks.set(
          collector,
          setTimeout(() => {
            this.timedOut = collector;
            void this.stop("timeout");
          }, collector.limits.timeoutMs),
        );
      }
      return;
    }
    const head = this.calls[0];
    if (head) this.timer = setTimeout(() => void this.stop("timeout"), head.collector.limits.timeoutMs);
  }

  /** Calls behind one that killed the runner never ran: they answer null, for the caller to run elsewhere. */
  private dropWaiting(): void {
    for (const pending of this.calls.splice(0)) {
      pending.collector.finished = true;
      pending.resolve(null);
    }
  }

  /**
   * The runner is gone with concurrent calls in flight: they all ran (in part),
   * so none may run again elsewhere. The one that ran out of time gets the
   * Timeout; the others say why they were cut short.
   */
  private failConcurrent(code: number | null, signal: NodeJS.Signals | null): void {
    for (const { collector } of [...this.calls]) {
      const own = this.timedOut === undefined || this.timedOut === collector;
      const error: SandboxError = own
        ? this.exitError(collector.limits, code, signal)
        : { code: "RunnerCrashed", name: "RunnerCrashed", message: "The runner was stopped because another run in it went past its time limit; this run was cut short with it." };
      this.finishConcurrent(this.calls.findIndex((pending) => pending.collector === collector), { ok: false, error, db: null }, false);
    }
  }

  private exitError(limits: Limits, code = this.child.exitCode, signal = this.child.signalCode): SandboxError {
    const { stderrTail, stoppedBy, spawnError, memoryMb, violation, memoryKilled } = this;
    const wholeLimitMb = this.options.resources?.memoryLimitMb;
    return classifyExit({ code, signal, stderrTail, stoppedBy, spawnError, timeoutMs: limits.timeoutMs, memoryMb, violation, memoryKilled, wholeLimitMb });
  }

  private onGone(code: number | null, signal: NodeJS.Signals | null): void {
    if (!this.alive) return;
    this.alive = false;
    this.memoryKilled = this.options.resources?.outOfMemory() ?? false;
    if (this.concurrent) this.failConcurrent(code, signal);
    const collector = this.calls[0]?.collector;
    // Endings held in the runner died with it: the first call left may have ended well, so it is not blamed.
    if (collector && !collector.finished && !this.holding) this.finish(collector, { ok: false, error: this.exitError(collector.limits, code, signal), db: null }, false);
    this.dropWaiting();
    this.options.resources?.release();
    this.markExited();
    this.options.onExit(this);
  }
}

type BatchInvoke = Extract<HostMessage, { type: "invoke-many" }>["invokes"][number];

/** A step call's record joins its ending; set, not spread: this runs once per call. */
function withStep(ending: CallEnding, message: { step?: StepOutcome; ms?: number }): CallEnding {
  if (message.step) ending.step = message.step;
  if (message.ms !== undefined) ending.ms = message.ms;
  return ending;
}
