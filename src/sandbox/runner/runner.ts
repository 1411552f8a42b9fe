/**
 * The runner's state: the bundle it serves (loaded on its first call, then
 * kept warm) and the call in progress, which owns everything user code does
 * until it ends.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { DbSnapshot, HostMessage, LogStream, RunnerMessage, WireResponse } from "../protocol.js";
import type { SandboxError } from "../sandbox-error.js";
import { ActiveCall } from "./active-call.js";
import { InvalidComponentError, requireBundle, toComponent, type Component } from "./component.js";
import { describeThrown, trimStack } from "./describe-thrown.js";
import { dispatch } from "./dispatch.js";
import { runChain } from "./step-chain.js";
import { StepRecorder } from "./step-recorder.js";

export type InvokeMessage = Extract<HostMessage, { type: "invoke" }>;

type Loaded = { component: Component } | { error: SandboxError };

/**
 * A workflow bundle: `module.exports = { [WORKFLOW_STEPS]: [() => exports of step 0, …] }`
 * (see engine/workflows/workflow-bundle.ts). Each step loads on its first call.
 */
const WORKFLOW_STEPS = "__runnelWorkflowSteps";

export interface RunnerOptions {
  send(message: RunnerMessage<WireResponse>): void;
  /** The runner's own folder, whose stack frames are left out of errors. */
  runnerPath: string;
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Held endings are sent at the latest when the oldest has waited this long,
 * checked between calls and by a timer (for a call that waits on I/O): it
 * bounds what a runner that dies can take with it.
 */
const HOLD_MS = 5;

export class Runner {
  private readonly options: RunnerOptions;
  private bundleFile: string | undefined;
  private loaded: Loaded | undefined;
  /** A workflow bundle's steps, loaded one by one. */
  private readonly loadedSteps = new Map<number, Loaded>();
  /** The bundle's module, required once: a component's, or a workflow bundle's step factories. */
  private module: { exported: unknown } | { error: SandboxError } | undefined;
  private current: ActiveCall | undefined;
  /** Concurrent calls in flight, and which one's code is running (for its logs). */
  private readonly active = new Set<ActiveCall>();
  private concurrentCalls: AsyncLocalStorage<ActiveCall> | undefined;
  /** The store as the last call left it, for calls sent together (carryDb). */
  private carried: DbSnapshot = {};
  /** Calls run one after the other, in the order they arrived. */
  private queue: Promise<void> = Promise.resolve();
  /** Calls queued and not yet ended (one after the other, not concurrent ones). */
  private queued = 0;
  /** Ended calls whose endings wait for the calls behind them, in order, and since when. */
  private held: ActiveCall[] = [];
  private heldSince = 0;
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(options: RunnerOptions) {
    this.options = options;
  }

  setBundle(file: string): void {
    this.bundleFile = file;
  }

  /** Output of user code: the call whose code printed it (concurrent calls), else the current call's; dropped between calls. */
  log(stream: LogStream, text: string): void {
    (this.concurrentCalls?.getStore() ?? this.current)?.log(stream, text);
  }

  /** Queues a call behind those already sent; a concurrent one starts at once. */
  enqueue(message: InvokeMessage): void {
    if (!message.concurrent) {
      this.queued += 1;
      this.queue = this.queue.then(() => this.invoke(message));
      return;
    }
    // Made on first use: an AsyncLocalStorage costs every promise of the process something, and a source's runner never needs one.
    const calls = (this.concurrentCalls ??= new AsyncLocalStorage<ActiveCall>());
    const call = this.startCall(message);
    this.active.add(call);
    void calls.run(call, () => this.run(call, message)).finally(() => this.active.delete(call));
  }

  private startCall(message: InvokeMessage): ActiveCall {
    const step = message.call.kind === "step" ? new StepRecorder() : undefined;
    const hold = message.holdEnd && !message.concurrent ? (ended: ActiveCall, now: boolean) => this.hold(ended, now) : undefined;
    return new ActiveCall({ ...message, db: message.carryDb ? this.carried : message.db, step, send: this.options.send, hold });
  }

  private async invoke(message: InvokeMessage): Promise<void> {
    const call = this.startCall(message);
    this.current = call;
    try {
      await this.run(call, message);
    } finally {
      this.carried = call.db.snapshot();
      this.queued -= 1;
      // The last call of what was sent, or endings held long enough: send them.
      if (this.queued === 0 || performance.now() - this.heldSince >= HOLD_MS) this.sendHeld();
    }
  }

  /**
   * A call of a batch ended: its ending waits for the calls behind it, so the
   * batch answers in one message, one write and one read instead of one per
   * call. The host then has one wake-up per batch rather than per call.
   */
  private hold(call: ActiveCall, now: boolean): void {
    if (this.held.length === 0) {
      this.heldSince = performance.now();
      this.holdTimer = setTimeout(() => this.sendHeld(), HOLD_MS);
    }
    this.held.push(call);
    if (now) this.sendHeld();
  }

  /** Sends the held endings, in the order the calls ended, as one message. */
  private sendHeld(): void {
    if (this.held.length === 0) return;
    clearTimeout(this.holdTimer);
    const messages = this.held.flatMap((call) => call.takePending());
    this.held = [];
    if (messages.length > 0) this.options.send(messages.length === 1 ? messages[0]! : { type: "batch", messages });
  }

  private async run(call: ActiveCall, message: InvokeMessage): Promise<void> {
    if (message.call.kind === "steps") {
      // Each step is reported, failed or not, in its step-done; the call itself ends well unless the runner faults.
      await runChain(call, message.call, { load: (index) => this.loadStep(index), describe: (thrown) => this.describe(thrown) });
      return call.succeed(undefined);
    }
    try {
      const target = this.load();
      if ("error" in target) return call.fail(target.error, false);
      const value = await dispatch(target.component, message.call, {
        props: message.props,
        dbProps: message.dbProps,
        db: call.db,
        emit: (event, meta) => call.emit(event, meta),
        respond: (response, what) => call.respond(response, what),
        step: call.step,
      });
      // One turn of the event loop, so that a promise the call left rejected fails this call.
      await nextTurn();
      call.succeed(value);
    } catch (thrown) {
      await nextTurn();
      call.fail(this.describe(thrown), false);
    }
  }

  /**
   * An exception or rejection outside the call's own promise: the call fails,
   * and the runner asks to be replaced. Among concurrent calls the one at
   * fault cannot be told, so every one in flight fails with it.
   */
  fault(error: SandboxError): void {
    // What ended before the fault reaches the host before the fault does.
    this.sendHeld();
    const inFlight = [...this.active].filter((call) => !call.ended);
    if (this.current && !this.current.ended) inFlight.push(this.current);
    if (inFlight.length === 0) this.options.send({ type: "error", id: null, error, db: null, retire: true });
    for (const call of inFlight) call.fail(error, true);
  }

  describe(thrown: unknown, options: { code?: "UnhandledRejection"; prefix?: string } = {}): SandboxError {
    if (thrown instanceof InvalidComponentError) {
      const error: SandboxError = { code: "InvalidComponent", name: "InvalidComponent", message: thrown.message };
      const stack = trimStack(thrown.stack, this.options.runnerPath);
      if (stack) error.stack = stack;
      return error;
    }
    return describeThrown(thrown, { runnerFile: this.options.runnerPath, ...options });
  }

  private loadStep(index: number): Loaded {
    const cached = this.loadedSteps.get(index);
    if (cached) return cached;
    const bundle = this.loadModule();
    if ("error" in bundle) return bundle;
    const factories = (bundle.exported as Record<string, unknown> | null)?.[WORKFLOW_STEPS];
    const factory = Array.isArray(factories) ? factories[index] : undefined;
    let loaded: Loaded;
    if (typeof factory !== "function") {
      loaded = { error: { code: "InvalidComponent", name: "InvalidComponent", message: `The workflow bundle has no step ${index}.` } };
    } else {
      try {
        loaded = { component: toComponent(factory()) };
      } catch (thrown) {
        loaded = { error: this.describe(thrown instanceof InvalidComponentError ? thrown : new InvalidComponentError(`The step's code failed to load: ${describeLoadFailure(thrown)}`)) };
      }
    }
    this.loadedSteps.set(index, loaded);
    return loaded;
  }

  /** The bundle's module as required once (a workflow bundle only defines its steps at load). */
  private loadModule(): { exported: unknown } | { error: SandboxError } {
    if (this.module) return this.module;
    if (!this.bundleFile) return (this.module = { error: { code: "InvalidComponent", name: "InvalidComponent", message: "No component bundle was loaded." } });
    try {
      this.module = { exported: requireBundle(this.bundleFile) };
    } catch (thrown) {
      this.module = { error: this.describe(thrown) };
    }
    return this.module;
  }

  /** The bundle's component; a failure is kept, as the module is (requiring again would run its top-level code again). */
  private load(): Loaded {
    if (this.loaded) return this.loaded;
    const module = this.loadModule();
    if ("error" in module) return (this.loaded = module);
    try {
      this.loaded = { component: toComponent(module.exported) };
    } catch (thrown) {
      this.loaded = { error: this.describe(thrown) };
    }
    return this.loaded;
  }
}

function describeLoadFailure(thrown: unknown): string {
  return thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
}
