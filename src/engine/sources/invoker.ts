import type { Logger } from "pino";
import type { ValidatedComponent } from "../../domain/component-rules.js";
import type { PendingEmit } from "../../domain/dedupe.js";
import { orderEmits, validateEmitMeta } from "../../domain/emit-order.js";
import { NotFoundError } from "../../domain/errors.js";
import type { DeployedSource, LogEntry, SavedComponent, StoredEvent } from "../../domain/sources.js";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { Limits } from "../../sandbox/limits.js";
import type { ComponentCall } from "../../sandbox/protocol.js";
import { addParsedBody } from "../../sandbox/runner/http-body.js";
import type { LateFaults } from "../late-faults.js";
import type { InvokeResult, Sandbox } from "../../sandbox/sandbox.js";
import type { SandboxError } from "../../sandbox/sandbox-error.js";
import type { Store } from "../../store/store.js";
import type { ComponentLoader } from "../component-loader.js";
import type { EventHub } from "../event-hub.js";
import { ExpiringCache } from "../expiring-cache.js";
import { KeyedMutex } from "../keyed-mutex.js";
import type { SecretBox } from "../secrets.js";
import { runtimeProps } from "./props.js";

/** What started a call; it decides the time limit. */
export type Trigger = "http" | "timer" | "manual" | "hook" | "options";

/** Limits of user code (the hosted service's defaults: 30 s for HTTP, 60 s for timers, 256 MB). */
export interface RunLimits {
  httpTimeoutMs: number;
  runTimeoutMs: number;
  memoryMb: number;
  /** The admin's ceilings on what a source may ask for (RUNNEL_MAX_MEMORY_MB, RUNNEL_MAX_TIMEOUT_SECONDS). */
  maxMemoryMb: number;
  maxTimeoutMs: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = { httpTimeoutMs: 30_000, runTimeoutMs: 60_000, memoryMb: 256, maxMemoryMb: 1024, maxTimeoutMs: 300_000 };

export interface CallOutcome {
  result: InvokeResult;
  /** Emits that passed their metadata checks, ordered by ts. */
  emits: PendingEmit[];
  /** Problems found with the call's emits, to log. */
  problems: string[];
}

export interface InvocationResult {
  ok: boolean;
  error?: SandboxError;
  value?: unknown;
  events: StoredEvent[];
  durationMs: number;
}

export interface SourceInvokerOptions {
  store: Store;
  sandbox: Sandbox;
  loader: ComponentLoader;
  hub: EventHub;
  secrets: SecretBox;
  logger: Logger;
  endpointUrl: (source: DeployedSource) => string | null;
  /** Told which source runs which bundle, so that a fault after a call reaches the source's logs. */
  lateFaults?: LateFaults;
  limits?: RunLimits;
  /** Deliveries were recorded with appended events: their listeners' runs are waiting. */
  onAppended?: () => void;
  now?: () => number;
}

/** A call waiting for its source's next batch. */
interface PendingCall {
  call: ComponentCall;
  trigger: Trigger;
  onRespond: ((response: HttpResponse) => void) | undefined;
  resolve(result: InvocationResult): void;
  reject(error: unknown): void;
}

/** A batch that has run, waiting for its commit. */
interface RanBatch {
  source: DeployedSource;
  outcomes: CallOutcome[];
  dedupe: ValidatedComponent["dedupe"];
  db: Record<string, unknown> | null;
  batch: PendingCall[];
}

/** Per source: the commit chain's tail, how many commits are in it, the store they will write, and the batches waiting. */
interface CommitChain {
  tail: Promise<void>;
  count: number;
  db: Record<string, unknown> | null;
  ready: RanBatch[];
}

/** Consecutive batches that store the same way (an update between them changes code or retention). */
function mergeable(ready: RanBatch[]): RanBatch[][] {
  const groups: RanBatch[][] = [];
  for (const ran of ready) {
    const group = groups[groups.length - 1];
    const head = group?.[0];
    if (head && head.source.componentId === ran.source.componentId && head.source.retention === ran.source.retention) group!.push(ran);
    else groups.push([ran]);
  }
  return groups;
}

/** Calls run in one batch at most: bounds the wait of the first of them. */
const MAX_BATCH = 64;
/** How long a busy source's row is reused between batches. */
const SOURCE_CACHE_MS = 1_000;

/**
 * Runs a deployed source's code in the sandbox and makes what it did durable:
 * its events (deduped, in one transaction with its key-value store), its logs
 * and its errors. Calls of one source run one at a time, so each sees the
 * store the previous one left.
 *
 * Two stages per batch: running (under the source's mutex) and committing
 * (in a per-source chain, in order). The next batch runs while the last one
 * commits, starting from the store the last one left, held here until its
 * commit lands; the runner and the database work at the same time.
 */
export class SourceInvoker {
  private readonly mutex = new KeyedMutex();
  /** Source rows, reused for a second while a source is busy (see freshSource). */
  private readonly sources = new ExpiringCache<string, DeployedSource>({ ttlMs: SOURCE_CACHE_MS, maxEntries: 10_000 });
  private readonly commits = new Map<string, CommitChain>();
  private readonly queues = new Map<string, { ownerId: string; items: PendingCall[] }>();
  private readonly components = new Map<string, { saved: SavedComponent; validated: ValidatedComponent }>();
  private readonly now: () => number;

  constructor(private readonly options: SourceInvokerOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Runs `call` on a stored source and commits its effects. Calls that arrive
   * while the source is busy are run together as one batch: one after the
   * other in the runner, each seeing the store the previous one left, then
   * committed in one transaction, so a busy source pays for the database once
   * per batch rather than once per request.
   */
  invoke(source: DeployedSource, call: ComponentCall, trigger: Trigger, onRespond?: (response: HttpResponse) => void): Promise<InvocationResult> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(source.id);
      if (!queue) {
        queue = { ownerId: source.ownerId, items: [] };
        this.queues.set(source.id, queue);
        this.scheduleBatch(source.id);
      }
      queue.items.push({ call, trigger, onRespond, resolve, reject });
    });
  }

  /**
   * Runs `task` alone for the source: after the batch running now and every
   * commit in flight, before any later batch. Lifecycle operations use it.
   */
  exclusive<T>(sourceId: string, task: () => Promise<T>): Promise<T> {
    return this.mutex.run(sourceId, async () => {
      await this.commits.get(sourceId)?.tail;
      try {
        return await task();
      } finally {
        this.sources.delete(sourceId);
      }
    });
  }

  /** Resolves when every run and commit queued so far has finished. */
  async drain(): Promise<void> {
    await this.mutex.drain();
    await Promise.all([...this.commits.values()].map((chain) => chain.tail));
  }

  private scheduleBatch(sourceId: string): void {
    // A source at rest would start a batch for the first call of a burst alone, and the
    // rest of the burst would wait for it: its batch waits one turn of the event loop, so
    // that the requests read in the same turn join it. Its place in the mutex is taken now.
    const gather = !this.mutex.isHeld(sourceId);
    void this.mutex.run(sourceId, () => this.runBatch(sourceId, gather));
  }

  /** The run stage; it hands the commit stage on without waiting for it. */
  private async runBatch(sourceId: string, gather: boolean): Promise<void> {
    if (gather) await afterPendingCallbacks();
    const queue = this.queues.get(sourceId);
    if (!queue) return;
    const batch = queue.items.splice(0, MAX_BATCH);
    if (queue.items.length === 0) this.queues.delete(sourceId);
    else this.scheduleBatch(sourceId);
    const fail = (error: unknown) => {
      for (const pending of batch) pending.reject(error);
    };
    let ran: Awaited<ReturnType<SourceInvoker["runStage"]>>;
    try {
      ran = await this.runStage(queue.ownerId, sourceId, batch);
    } catch (error) {
      return fail(error);
    }
    this.commitStage(sourceId, { ...ran, batch });
  }

  private async runStage(ownerId: string, sourceId: string, batch: PendingCall[]) {
    const { store } = this.options;
    const source = await this.freshSource(ownerId, sourceId);
    const component = await this.componentOf(source);
    const pendingDb = this.commits.get(sourceId)?.db;
    // A component without a $.service.db prop never reads or writes its store: spare the query.
    const usesDb = component.validated.props.some((prop) => prop.baseType === "$.service.db");
    const before = pendingDb ?? (usesDb ? await store.readSourceDb(ownerId, sourceId) : {});
    const outcomes = await this.callMany(source, component, batch, before);
    let db: Record<string, unknown> | null = pendingDb ?? null;
    for (const outcome of outcomes) if (outcome.result.db) db = outcome.result.db;
    return { source, outcomes, dedupe: component.validated.dedupe, db };
  }

  /**
   * The source as stored, read at most once a second while it is busy: changes
   * made here (through `exclusive`) clear it at once; one made by another
   * process is seen within the second.
   */
  private async freshSource(ownerId: string, sourceId: string): Promise<DeployedSource> {
    const cached = this.sources.get(sourceId);
    if (cached?.ownerId === ownerId) return cached;
    const source = await this.options.store.findSource(ownerId, sourceId);
    if (!source) {
      this.sources.delete(sourceId);
      throw new NotFoundError("source", sourceId);
    }
    return this.sources.set(sourceId, source);
  }

  /**
   * Queues a batch's commit behind the source's earlier ones; the store it
   * will write is what later batches start from. Resolves at once: the
   * batch's callers are answered when its commit lands.
   */
  private commitStage(sourceId: string, ran: RanBatch): void {
    const chain = this.commits.get(sourceId) ?? { tail: Promise.resolve(), count: 0, db: null, ready: [] };
    chain.count += 1;
    if (ran.db) chain.db = ran.db;
    chain.ready.push(ran);
    // A turn of the event loop first: the next batch, started by promise callbacks, goes to the
    // runner before this commit holds the thread, so the runner works while the database writes.
    const link = chain.tail.then(afterPendingCallbacks).then(() => this.commitReady(chain));
    chain.tail = link.catch((error: unknown) => this.options.logger.error({ err: error, sourceId }, "a source's commit failed")).then(() => {
      chain.count -= 1;
      if (chain.count === 0 && this.commits.get(sourceId) === chain) this.commits.delete(sourceId);
    });
    this.commits.set(sourceId, chain);
  }

  /**
   * Commits every batch of the source that has run and waits, in one
   * transaction when they agree on how to store (same code and retention):
   * when the database falls behind (a slow disk, a checkpoint), the batches
   * that pile up meanwhile cost it one transaction, not one each.
   */
  private async commitReady(chain: CommitChain): Promise<void> {
    const ready = chain.ready.splice(0);
    for (const group of mergeable(ready)) {
      const outcomes = group.flatMap((ran) => ran.outcomes);
      const last = group[group.length - 1]!;
      try {
        const results = await this.commitOutcomes(last.source, outcomes, last.dedupe, last.db);
        let index = 0;
        for (const ran of group) for (const pending of ran.batch) pending.resolve(results[index++]!);
      } catch (error) {
        const pendings = group.flatMap((ran) => ran.batch);
        if (pendings.length === 1) pendings[0]!.reject(error);
        else await this.commitOneByOne(last, outcomes, pendings, error);
      }
    }
  }

  /**
   * A batch's shared commit failed: one request's events may be what the
   * store refused, and the others must not fail with it. Each call is
   * committed alone, in order, so only the one at fault gets the error;
   * the source's store, as the batch left it, is written last.
   */
  private async commitOneByOne(last: RanBatch, outcomes: CallOutcome[], pendings: PendingCall[], batchError: unknown): Promise<void> {
    this.options.logger.warn({ err: batchError, sourceId: last.source.id, calls: pendings.length }, "a source's batch could not be committed; its calls are committed one by one");
    for (const [index, pending] of pendings.entries()) {
      try {
        const [result] = await this.commitOutcomes(last.source, [outcomes[index]!], last.dedupe, null);
        pending.resolve(result!);
      } catch (error) {
        pending.reject(error);
      }
    }
    if (last.db) {
      await this.commitOutcomes(last.source, [], last.dedupe, last.db).catch((error: unknown) =>
        this.options.logger.error({ err: error, sourceId: last.source.id }, "a source's key-value store could not be saved after its batch"),
      );
    }
  }

  private async commitOutcomes(source: DeployedSource, outcomes: CallOutcome[], dedupe: ValidatedComponent["dedupe"], db: Record<string, unknown> | null): Promise<InvocationResult[]> {
    const owners = new Map<PendingEmit, number>();
    outcomes.forEach((outcome, index) => outcome.emits.forEach((emit) => owners.set(emit, index)));
    const eventsByCall = await this.commitAll(source, outcomes, dedupe, db, owners);
    return outcomes.map((outcome, index) => {
      const invocation: InvocationResult = { ok: outcome.result.ok, events: eventsByCall[index]!, durationMs: outcome.result.durationMs };
      if (outcome.result.error) invocation.error = outcome.result.error;
      if (outcome.result.value !== undefined) invocation.value = outcome.result.value;
      return invocation;
    });
  }

  /** Runs `call` on a source that may not be stored yet (deploy hooks), without committing anything. */
  async call(
    source: DeployedSource,
    component: { saved: SavedComponent; validated: ValidatedComponent },
    call: ComponentCall,
    trigger: Trigger,
    db: Record<string, unknown>,
    onRespond?: (response: HttpResponse) => void,
  ): Promise<CallOutcome> {
    const [outcome] = await this.callMany(source, component, [{ call, trigger, onRespond }], db);
    return outcome!;
  }

  /**
   * Runs calls one after the other over one store, sent to the runner
   * together; a timer source without run emits its tick without the sandbox.
   */
  private async callMany(
    source: DeployedSource,
    component: { saved: SavedComponent; validated: ValidatedComponent },
    calls: Array<Pick<PendingCall, "call" | "trigger" | "onRespond">>,
    db: Record<string, unknown>,
  ): Promise<CallOutcome[]> {
    const plainSchedule = (call: ComponentCall) => call.kind === "run" && !component.validated.hasRun;
    const { props, dbProps } = runtimeProps(component.validated, source, this.options.secrets, this.options.endpointUrl(source));
    const bundle = await this.options.loader.runnerBundle(component.saved);
    this.options.lateFaults?.remember(source.ownerId, bundle.id, source.id);
    const defaults = this.options.limits ?? DEFAULT_RUN_LIMITS;
    const own = source.limits;
    const timeoutFor = (trigger: Trigger) =>
      own?.timeoutSeconds ? own.timeoutSeconds * 1000 : trigger === "http" || trigger === "options" ? defaults.httpTimeoutMs : defaults.runTimeoutMs;
    // One limits object per trigger, shared by the calls of the batch (the sandbox resolves each object once).
    const limitsByTrigger = new Map<Trigger, Limits>();
    const limitsFor = (trigger: Trigger): Limits => {
      let limits = limitsByTrigger.get(trigger);
      if (!limits) {
        limits = { timeoutMs: timeoutFor(trigger), memoryMb: own?.memoryMb ?? defaults.memoryMb, maxLogBytes: 1024 * 1024 };
        limitsByTrigger.set(trigger, limits);
      }
      return limits;
    };
    const toSandbox = calls.filter((pending) => !plainSchedule(pending.call));
    const results = await this.options.sandbox.invokeBatch(
      toSandbox.map((pending) => ({ bundle, call: pending.call, props, dbProps, db, limits: limitsFor(pending.trigger) })),
      toSandbox.map((pending) => (pending.onRespond ? { onRespond: pending.onRespond } : undefined)),
    );
    let next = 0;
    return calls.map((pending) => {
      if (plainSchedule(pending.call)) {
        // A plain schedule: a timer source without run emits the timer event (or the HTTP request) itself.
        const call = pending.call as Extract<ComponentCall, { kind: "run" }>;
        const event = call.httpBody ? addParsedBody(call.event) : call.event;
        return { result: { ok: true, emits: [], db: null, logs: [], durationMs: 0 }, emits: [{ event }], problems: [] };
      }
      return checkEmits(results[next++]!);
    });
  }

  /** Commits one call's events (not its store), as hooks need; see commitAll. */
  async commit(source: DeployedSource, outcome: CallOutcome, dedupe: ValidatedComponent["dedupe"]): Promise<StoredEvent[]> {
    const owners = new Map(outcome.emits.map((emit) => [emit, 0] as const));
    return (await this.commitAll(source, [outcome], dedupe, outcome.result.db, owners))[0]!;
  }

  /**
   * Appends the calls' events and the store in one transaction, then their
   * logs, and tells live listeners. Returns each call's stored events.
   */
  private async commitAll(
    source: DeployedSource,
    outcomes: CallOutcome[],
    dedupe: ValidatedComponent["dedupe"],
    db: Record<string, unknown> | null,
    owners: Map<PendingEmit, number>,
  ): Promise<StoredEvent[][]> {
    const { store, hub } = this.options;
    const now = this.now();
    // The calls' logs go in the events' transaction: one commit for both.
    const logs = logEntries(outcomes.map((outcome) => outcome.result), outcomes.flatMap((outcome) => outcome.problems), now);
    const appended = await store.appendEvents({
      ownerId: source.ownerId,
      emitterId: source.id,
      emits: outcomes.flatMap((outcome) => outcome.emits),
      dedupe,
      retention: source.retention,
      now,
      sourceDb: db,
      logs,
    });
    const byCall: StoredEvent[][] = outcomes.map(() => []);
    appended.events.forEach((event, index) => byCall[owners.get(appended.accepted[index]!) ?? 0]!.push(event));
    for (const log of appended.logs) hub.publish(source.id, { kind: "log", item: log });
    // What only the append could tell (an emit its dedupe could not take) is logged after it: rare.
    const refused = appended.rejected.filter((rejection) => !rejection.duplicate).map((rejection) => `An event was not emitted: ${rejection.reason}`);
    if (refused.length > 0) await this.writeLogs(source, logEntries([], refused, now));
    for (const event of appended.events) hub.publish(source.id, { kind: "event", channel: event.channel, item: event });
    // The worker claims only when there is something to claim: a source nobody listens to costs it nothing.
    if (appended.deliveries > 0) this.options.onAppended?.();
    return byCall;
  }

  /** The source's saved component and its validated form. */
  async componentOf(source: DeployedSource): Promise<{ saved: SavedComponent; validated: ValidatedComponent }> {
    // Saved components never change (new code is a new component), so they can be kept.
    const cached = this.components.get(source.componentId);
    if (cached && cached.saved.ownerId === source.ownerId) return cached;
    const saved = await this.options.store.findComponent(source.ownerId, source.componentId);
    if (!saved) throw new Error(`The component ${source.componentId} of source ${source.id} is missing.`);
    const component = { saved, validated: this.options.loader.validatedOf(saved) };
    if (this.components.size >= 1_000) this.components.clear();
    this.components.set(source.componentId, component);
    return component;
  }

  private async writeLogs(source: DeployedSource, entries: Array<Pick<LogEntry, "stream" | "text" | "ts">>): Promise<void> {
    if (entries.length === 0) return;
    try {
      const logs = await this.options.store.appendLogs(source.ownerId, source.id, entries);
      for (const log of logs) this.options.hub.publish(source.id, { kind: "log", item: log });
    } catch (error) {
      this.options.logger.error({ err: error, sourceId: source.id }, "could not store a source's logs");
    }
  }
}

/** The log lines of calls: what each printed, then its error, then the problems found with its emits. */
function logEntries(results: InvokeResult[], problems: string[], at: number): Array<Pick<LogEntry, "stream" | "text" | "ts">> {
  const entries: Array<Pick<LogEntry, "stream" | "text" | "ts">> = [];
  for (const result of results) {
    for (const log of result.logs) entries.push({ stream: log.stream, text: log.text, ts: log.ts });
    if (result.error) entries.push({ stream: "stderr", text: describeError(result.error), ts: at });
  }
  for (const problem of problems) entries.push({ stream: "system", text: problem, ts: at });
  return entries;
}

/** Resolves once the promise callbacks queued so far (and I/O callbacks ready now) have run. */
function afterPendingCallbacks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** An error as a source's logs show it: name, message, then the stack. */
export function describeError(error: SandboxError): string {
  const head = `${error.name}: ${error.message}`;
  if (!error.stack) return `${head} [${error.code}]`;
  return error.stack.startsWith(head) ? `${error.stack} [${error.code}]` : `${head}\n${error.stack} [${error.code}]`;
}

/** An emit as the store takes it: the event and its (checked) metadata. */
function pendingEmit({ event, meta }: InvokeResult["emits"][number]): PendingEmit {
  const pending: PendingEmit = { event };
  if (meta.id !== undefined) pending.id = meta.id;
  if (meta.name !== undefined) pending.name = meta.name;
  if (meta.summary !== undefined) pending.summary = meta.summary;
  if (meta.ts !== undefined) pending.ts = meta.ts;
  return pending;
}

/** Checks the metadata of a call's emits and orders them by ts; what fails the checks is logged, not emitted. */
function checkEmits(result: InvokeResult): CallOutcome {
  const problems: string[] = [];
  const checked: PendingEmit[] = [];
  for (const emit of result.emits) {
    const problem = validateEmitMeta(emit.meta);
    if (problem) problems.push(`An event was not emitted: ${problem}`);
    else checked.push(pendingEmit(emit));
  }
  return { result, emits: orderEmits(checked), problems };
}
