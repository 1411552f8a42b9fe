import type { ValidatedComponent } from "../../domain/component-rules.js";
import type { DeployedSource, StoredEvent } from "../../domain/sources.js";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { ComponentCall } from "../../sandbox/protocol.js";
import { KeyedMutex } from "../../domain/keyed-mutex.js";
import { CommitChains } from "./commit-chain.js";
import { InvokeBatcher, type PendingCall } from "./invoke-batcher.js";
import { ResultWriter, type InvocationResult, type ResultWriterOptions } from "./result-writer.js";
import type { Trigger } from "./run-limits.js";
import { runCalls, type CallCarries, type CallOutcome, type SandboxCallsOptions } from "./sandbox-calls.js";
import { SourceCache, type SourceComponent } from "./source-cache.js";

export { DEFAULT_RUN_LIMITS, type RunLimits, type Trigger } from "./run-limits.js";
export { describeError } from "./run-logs.js";
export type { CallCarries, CallOutcome } from "./sandbox-calls.js";
export type { InvocationResult } from "./result-writer.js";

export interface SourceInvokerOptions extends SandboxCallsOptions, ResultWriterOptions {}

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
  private readonly cache: SourceCache;
  private readonly results: ResultWriter;
  private readonly commits: CommitChains;
  private readonly batcher: InvokeBatcher;

  constructor(private readonly options: SourceInvokerOptions) {
    this.cache = new SourceCache(options.store, options.loader);
    this.results = new ResultWriter(options);
    this.commits = new CommitChains(this.results, options.logger, !options.store.groupsWritesByTurn);
    this.batcher = new InvokeBatcher(this.mutex, (ownerId, sourceId, batch) => this.runBatch(ownerId, sourceId, batch));
  }

  /**
   * Runs `call` on a stored source and commits its effects. Calls that arrive
   * while the source is busy are run together as one batch: one after the
   * other in the runner, each seeing the store the previous one left, then
   * committed in one transaction, so a busy source pays for the database once
   * per batch rather than once per request. A call that carries out a
   * `delivery` (an event the source listens to) removes it in its commit.
   * `holdFor`: the listeners whose deliveries of the call's event are handed
   * over without a row (EventBatch.held), for a caller who waits for their runs.
   * `tickDueAt`: the shared queue's timer tick the call runs, recorded with
   * its events, so that the tick run again appends nothing (EventBatch.ticks).
   */
  invoke(source: DeployedSource, call: ComponentCall, trigger: Trigger, carries: CallCarries = {}): Promise<InvocationResult> {
    return this.batcher.add(source, call, trigger, carries);
  }

  /**
   * Runs `task` alone for the source: after the batch running now and every
   * commit in flight, before any later batch. Lifecycle operations use it.
   */
  exclusive<T>(sourceId: string, task: () => Promise<T>): Promise<T> {
    return this.mutex.run(sourceId, async () => {
      await this.commits.tail(sourceId);
      try {
        return await task();
      } finally {
        this.cache.forget(sourceId);
      }
    });
  }

  /** The source changed in another process: its next batch reads it again. */
  forget(sourceId: string): void {
    this.cache.forget(sourceId);
  }

  /** Resolves when every run and commit queued so far has finished. */
  async drain(): Promise<void> {
    await this.mutex.drain();
    await this.commits.drain();
  }

  /** The run stage; it hands the commit stage on without waiting for it. */
  private async runBatch(ownerId: string, sourceId: string, batch: PendingCall[]): Promise<void> {
    const fail = (error: unknown) => {
      for (const pending of batch) pending.reject(error);
    };
    let ran: Awaited<ReturnType<SourceInvoker["runStage"]>>;
    try {
      ran = await this.runStage(ownerId, sourceId, batch);
    } catch (error) {
      return fail(error);
    }
    this.commits.add(sourceId, { source: ran.source, outcomes: ran.outcomes, dedupe: ran.dedupe, db: ran.db, batch });
  }

  private async runStage(ownerId: string, sourceId: string, batch: PendingCall[]) {
    const source = await this.cache.fresh(ownerId, sourceId);
    const component = await this.cache.componentOf(source);
    const pendingDb = this.commits.pendingDb(sourceId);
    // A component without a $.service.db prop never reads or writes its store: spare the query.
    const usesDb = component.validated.props.some((prop) => prop.baseType === "$.service.db");
    const before = pendingDb ?? (usesDb ? await this.options.store.readSourceDb(ownerId, sourceId) : {});
    const outcomes = await runCalls(this.options, source, component, batch, before);
    let db: Record<string, unknown> | null = pendingDb ?? null;
    for (const outcome of outcomes) if (outcome.result.db) db = outcome.result.db;
    return { source, outcomes, dedupe: component.validated.dedupe, db };
  }

  /** Runs `call` on a source that may not be stored yet (deploy hooks), without committing anything. */
  async call(
    source: DeployedSource,
    component: SourceComponent,
    call: ComponentCall,
    trigger: Trigger,
    db: Record<string, unknown>,
    onRespond?: (response: HttpResponse) => void,
  ): Promise<CallOutcome> {
    const [outcome] = await runCalls(this.options, source, component, [{ call, trigger, onRespond }], db);
    return outcome!;
  }

  /** Commits one call's events (not its store), as hooks need. */
  commit(source: DeployedSource, outcome: CallOutcome, dedupe: ValidatedComponent["dedupe"]): Promise<StoredEvent[]> {
    return this.results.commitEvents(source, outcome, dedupe);
  }

  /** The source's saved component and its validated form. */
  componentOf(source: DeployedSource): Promise<SourceComponent> {
    return this.cache.componentOf(source);
  }
}
