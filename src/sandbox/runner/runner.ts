/**
 * The runner's state: the bundles of its owner it keeps loaded (bundles.ts),
 * the lanes of calls it was sent (lane.ts), and the calls in progress, each
 * of which owns everything its code does until it ends.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { DataStoreAnswer, HostMessage, LogStream, RunnerMessage, WireResponse } from "../protocol.js";
import type { SandboxError } from "../sandbox-error.js";
import { ActiveCall } from "./active-call.js";
import { LoadedBundles } from "./bundles.js";
import { InvalidComponentError } from "./component.js";
import { describeThrown, trimStack } from "./describe-thrown.js";
import { dispatch } from "./dispatch.js";
import { Lane } from "./lane.js";
import { runChain } from "./step-chain.js";
import { StepRecorder } from "./step-recorder.js";
import { nextTurn } from "./turn.js";

export type InvokeMessage = Extract<HostMessage, { type: "invoke" }>;

export interface RunnerOptions {
  /** Writes now; post: at the end of this microtask checkpoint, with others (channel.ts). */
  send(message: RunnerMessage<WireResponse>): void;
  post(message: RunnerMessage<WireResponse>): void;
  /** Written with the channel's next write (a step's report); secured: resolves once it would survive the runner (channel.ts). */
  keep(message: RunnerMessage<WireResponse>): void;
  secured(): Promise<void>;
  /** The runner's own folder, whose stack frames are left out of errors. */
  runnerPath: string;
  /** Bundles kept loaded at most (see bundles.ts). */
  maxLoaded: number;
}

/** Empties process.env: a runner starts with it empty, and every call finds it so. */
export function clearEnvironment(): void {
  for (const name of Object.keys(process.env)) delete process.env[name];
}

export class Runner {
  private readonly options: RunnerOptions;
  private readonly bundles: LoadedBundles;
  private readonly lanes = new Map<number, Lane>();
  /** Calls in progress, of every lane and concurrent ones. */
  private readonly active = new Set<ActiveCall>();
  /** The same calls by id, for the host's answers to their data store requests. */
  private readonly byId = new Map<number, ActiveCall>();
  /**
   * Which call's code is running, for its logs and faults, once two calls
   * have been in progress at once. Made on first need: an AsyncLocalStorage
   * costs every promise of the process something, and a runner that serves
   * one call at a time never needs one.
   */
  private scopes: AsyncLocalStorage<ActiveCall> | undefined;
  /** The call in progress that started outside any scope (before `scopes` existed): code outside every scope is its. */
  private unscoped: ActiveCall | undefined;
  /** The bundle of each call in progress, for a fault no call owns. */
  private readonly bundleOf = new WeakMap<ActiveCall, string>();

  constructor(options: RunnerOptions) {
    this.options = options;
    this.bundles = new LoadedBundles({ maxLoaded: options.maxLoaded, describe: (thrown) => this.describe(thrown) });
  }

  /** Output of user code: the call whose code printed it; dropped between calls. */
  log(stream: LogStream, text: string): void {
    (this.scopes?.getStore() ?? this.unscoped)?.log(stream, text);
  }

  /** Queues a call behind those of its lane; a concurrent one starts at once. */
  enqueue(message: InvokeMessage): void {
    if (message.concurrent) {
      void this.start(message, undefined);
      return;
    }
    const laneId = message.lane ?? 0;
    let lane = this.lanes.get(laneId);
    if (!lane) {
      lane = new Lane(this.options.send, (drained) => {
        if (this.lanes.get(laneId) === drained) this.lanes.delete(laneId);
      });
      this.lanes.set(laneId, lane);
    }
    const inLane = lane;
    inLane.enqueue(() => this.start(message, inLane));
  }

  /** The host's answer to a data store request of a call in progress. */
  /** The host cancelled the run of call `id`: its chain starts no further step. */
  stopChain(id: number): void {
    this.byId.get(id)?.stopChain();
  }

  storeReply(id: number, req: number, answer: DataStoreAnswer): void {
    this.byId.get(id)?.storeReply(req, answer);
  }

  /** Starts a call, in a scope of its own when another call is in progress, and resolves once it ended. */
  private async start(message: InvokeMessage, lane: Lane | undefined): Promise<ActiveCall> {
    const step = message.call.kind === "step" ? new StepRecorder() : undefined;
    const hold = message.holdEnd && lane ? (ended: ActiveCall, now: boolean) => lane.hold(ended, now) : undefined;
    const { send, post, keep, secured } = this.options;
    // Named fields, not the message spread: this runs once per call.
    const call = new ActiveCall({ id: message.id, db: message.carryDb && lane ? lane.carried : message.db, maxLogBytes: message.maxLogBytes, maxLogEntries: message.maxLogEntries, step, send, post, keep, secured, hold });
    this.bundleOf.set(call, message.bundle);
    if (this.active.size > 0) this.scopes ??= new AsyncLocalStorage<ActiveCall>();
    this.active.add(call);
    this.byId.set(call.id, call);
    const scoped = this.scopes !== undefined;
    if (!scoped) this.unscoped = call;
    try {
      await (this.scopes ? this.scopes.run(call, () => this.run(call, message)) : this.run(call, message));
    } finally {
      this.active.delete(call);
      this.byId.delete(call.id);
      if (this.unscoped === call) this.unscoped = undefined;
      // The runner serves many of its owner's components: what one call put in the environment, the next does not find.
      if (this.active.size === 0) clearEnvironment();
    }
    return call;
  }

  private async run(call: ActiveCall, message: InvokeMessage): Promise<void> {
    const bundle = this.bundles.use(message.bundle);
    try {
      if (message.call.kind === "steps") {
        // Each step is reported, failed or not, in its step-done; the call itself ends well unless the runner faults.
        await runChain(call, message.call, { load: (index) => bundle.step(index), describe: (thrown) => this.describe(thrown) });
        return call.succeed(undefined);
      }
      try {
        const target = bundle.component();
        if ("error" in target) return call.fail(target.error, false);
        const value = await dispatch(target.component, message.call, {
          props: message.props,
          dbProps: message.dbProps,
          db: call.db,
          emit: (event, meta) => call.emit(event, meta),
          respond: (response, what, options) => call.respond(response, what, options),
          storeRequest: (store, request) => call.storeRequest(store, request),
          authRequest: (account, stale) => call.authRequest(account, stale),
          step: call.step,
        });
        // One turn of the event loop, so that a promise the call left rejected fails this call.
        await nextTurn();
        call.succeed(value);
      } catch (thrown) {
        await nextTurn();
        call.fail(this.describe(thrown), false);
      }
    } finally {
      this.bundles.release(bundle);
    }
  }

  /**
   * An exception or rejection outside a call's own promise, or process.exit:
   * the runner's state is suspect, and it asks to be replaced. The call whose
   * code it was fails with it, when that can be told: the call in whose
   * scope it happened, or the only call in progress. The others in progress
   * are cut short by the runner's end, and the host runs them again.
   */
  fault(error: SandboxError): void {
    // What ended before the fault reaches the host before the fault does.
    for (const lane of this.lanes.values()) lane.sendHeld();
    const inFlight = [...this.active].filter((call) => !call.ended);
    const scoped = this.scopes?.getStore() ?? this.unscoped;
    const culprit = scoped && !scoped.ended ? scoped : inFlight.length === 1 ? inFlight[0] : undefined;
    if (culprit) return culprit.fail(error, true);
    // No call owns it: a call that ended left it behind (its scope tells which bundle), or the stack names the bundle.
    const bundle = (scoped && this.bundleOf.get(scoped)) ?? this.bundles.named(error.stack);
    this.options.send({ type: "error", id: null, error, db: null, retire: true, ...(bundle ? { bundle } : {}), ...(inFlight.length > 0 ? { inFlight: true } : {}) });
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
}
