/**
 * The commit stage of a source's batches: per source, a chain that commits
 * them in order, the batches that piled up together when they store alike,
 * and one call at a time when a shared commit fails.
 */
import type { Logger } from "pino";
import type { ValidatedComponent } from "../../domain/component-rules.js";
import type { DeployedSource } from "../../domain/sources.js";
import { afterPendingCallbacks } from "./invoke-batcher.js";
import type { InvocationResult, ResultWriter } from "./result-writer.js";
import type { CallOutcome } from "./sandbox-calls.js";
import { ChurningMap } from "../../domain/churning-map.js";

/** A caller waiting for its call's commit. */
export interface Waiting {
  resolve(result: InvocationResult): void;
  reject(error: unknown): void;
}

/** A batch that has run, waiting for its commit. */
export interface RanBatch {
  source: DeployedSource;
  outcomes: CallOutcome[];
  dedupe: ValidatedComponent["dedupe"];
  db: Record<string, unknown> | null;
  batch: Waiting[];
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

export class CommitChains {
  private readonly chains = new ChurningMap<string, CommitChain>();

  /** `turnFirst`: wait for the end of the event loop's turn before committing; see add(). */
  constructor(
    private readonly results: ResultWriter,
    private readonly logger: Logger,
    private readonly turnFirst: boolean,
  ) {}

  /** Settles when the source's commits queued so far have; undefined when none is in flight. */
  tail(sourceId: string): Promise<void> | undefined {
    return this.chains.get(sourceId)?.tail;
  }

  /** The store the source's commits in flight will write (null: they leave it as it is); undefined when none is in flight. */
  pendingDb(sourceId: string): Record<string, unknown> | null | undefined {
    return this.chains.get(sourceId)?.db;
  }

  /** Resolves when every commit queued so far has finished. */
  async drain(): Promise<void> {
    await Promise.all(this.chains.values().map((chain) => chain.tail));
  }

  /**
   * Queues a batch's commit behind the source's earlier ones; the store it
   * will write is what later batches start from. Returns at once: the
   * batch's callers are answered when its commit lands.
   */
  add(sourceId: string, ran: RanBatch): void {
    const chain = this.chains.get(sourceId) ?? { tail: Promise.resolve(), count: 0, db: null, ready: [] };
    chain.count += 1;
    if (ran.db) chain.db = ran.db;
    chain.ready.push(ran);
    // A turn of the event loop first: the next batch, started by promise callbacks, goes to the
    // runner before this commit holds the thread, so the runner works while the database writes.
    // A store that groups writes by turn waits for it already; a second wait only held the batch's
    // callers longer, and in a closed loop the next batch was half as large (session 27: 6 % more
    // CPU a request on the HTTP source path).
    const settled = this.turnFirst ? chain.tail.then(afterPendingCallbacks) : chain.tail;
    const link = settled.then(() => this.commitReady(chain));
    chain.tail = link.catch((error: unknown) => this.logger.error({ err: error, sourceId }, "a source's commit failed")).then(() => {
      chain.count -= 1;
      if (chain.count === 0 && this.chains.get(sourceId) === chain) this.chains.delete(sourceId);
    });
    this.chains.set(sourceId, chain);
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
        const results = await this.results.commit(last.source, outcomes, last.dedupe, last.db);
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
  private async commitOneByOne(last: RanBatch, outcomes: CallOutcome[], pendings: Waiting[], batchError: unknown): Promise<void> {
    this.logger.warn({ err: batchError, sourceId: last.source.id, calls: pendings.length }, "a source's batch could not be committed; its calls are committed one by one");
    for (const [index, pending] of pendings.entries()) {
      try {
        const [result] = await this.results.commit(last.source, [outcomes[index]!], last.dedupe, null);
        pending.resolve(result!);
      } catch (error) {
        pending.reject(error);
      }
    }
    if (last.db) {
      await this.results.commit(last.source, [], last.dedupe, last.db).catch((error: unknown) =>
        this.logger.error({ err: error, sourceId: last.source.id }, "a source's key-value store could not be saved after its batch"),
      );
    }
  }
}
