/**
 * Makes what a source's calls did durable: their events (deduped), the
 * source's key-value store and their logs in one transaction; then tells
 * live listeners and, when deliveries were recorded, the delivery worker.
 */
import type { Logger } from "pino";
import type { ValidatedComponent } from "../../domain/component-rules.js";
import type { PendingEmit } from "../../domain/dedupe.js";
import type { DeployedSource, StoredEvent } from "../../domain/sources.js";
import type { SandboxError } from "../../sandbox/sandbox-error.js";
import type { ClaimedDelivery, Store } from "../../store/store.js";
import type { EventHub } from "../event-hub.js";
import { NO_METRICS, type Metrics, type RunTriggerKind } from "../metrics.js";
import type { Trigger } from "./run-limits.js";
import { logEntries, type LogLine } from "./run-logs.js";
import type { CallOutcome } from "./sandbox-calls.js";

export interface InvocationResult {
  ok: boolean;
  error?: SandboxError;
  value?: unknown;
  events: StoredEvent[];
  durationMs: number;
}

/** Who runs the deliveries an append records, when it takes them in hand (the delivery worker). */
export interface DeliveryHandOff {
  /** The claim to record them with; null when it does not take them now (not started, or stopping). */
  claimFor(): { claimer: string | null; leaseMs: number } | null;
  take(claimed: ClaimedDelivery[]): void;
  /**
   * Deliveries a gate admitted, claimed, before the record that admits them
   * committed (FinishRunsInput.onAdmitted): taken only by a worker that runs
   * them in this process, whose runs wait for that commit before their own
   * record. False: not taken (they come to `take` after the commit).
   */
  takeBeforeCommit?(claimed: ClaimedDelivery[]): boolean;
  /** A delivery was recorded pending, due at `at` (a rate limit's start time): a claimer that sleeps may wake then. */
  dueAt?(at: number): void;
}

export interface ResultWriterOptions {
  store: Store;
  hub: EventHub;
  logger: Logger;
  /** Deliveries were recorded with appended events: their listeners' runs are waiting. */
  onAppended?: () => void;
  /**
   * Record deliveries already claimed for this process and hand them here to
   * run at once (`claim` of EventBatch), instead of having the worker claim
   * them from the store; a store that cannot leaves them pending and wakes.
   */
  handOff?: DeliveryHandOff;
  /** Counts the calls that ran and the events they emitted; none by default. */
  metrics?: Metrics;
  now?: () => number;
}

/** The run kind of a source's call; hooks and prop options are not runs. */
const RUN_TRIGGERS: Partial<Record<Trigger, RunTriggerKind>> = { http: "http", timer: "timer", manual: "manual", subscription: "emit" };

export class ResultWriter {
  private readonly now: () => number;
  private readonly metrics: Metrics;

  constructor(private readonly options: ResultWriterOptions) {
    this.now = options.now ?? Date.now;
    this.metrics = options.metrics ?? NO_METRICS;
  }

  /** Commits the calls' events and, when given, the source's store; returns what each call's caller gets. */
  async commit(source: DeployedSource, outcomes: CallOutcome[], dedupe: ValidatedComponent["dedupe"], db: Record<string, unknown> | null): Promise<InvocationResult[]> {
    const owners = new Map<PendingEmit, number>();
    outcomes.forEach((outcome, index) => outcome.emits.forEach((emit) => owners.set(emit, index)));
    const eventsByCall = await this.commitAll(source, outcomes, dedupe, db, owners);
    if (this.metrics.enabled) this.countRuns(outcomes);
    return outcomes.map((outcome, index) => {
      const invocation: InvocationResult = { ok: outcome.result.ok, events: eventsByCall[index]!, durationMs: outcome.result.durationMs };
      if (outcome.result.error) invocation.error = outcome.result.error;
      if (outcome.result.value !== undefined) invocation.value = outcome.result.value;
      return invocation;
    });
  }

  /** Commits one call's events (not its store), as hooks need; see commitAll. */
  async commitEvents(source: DeployedSource, outcome: CallOutcome, dedupe: ValidatedComponent["dedupe"]): Promise<StoredEvent[]> {
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
    const claim = this.options.handOff?.claimFor();
    const completes = outcomes.flatMap((outcome) => (outcome.delivery ? [outcome.delivery] : []));
    const ticks = outcomes.flatMap((outcome) => (outcome.tickDueAt !== undefined ? [{ dueAtMs: outcome.tickDueAt, emits: outcome.emits }] : []));
    const held = claim ? heldEmits(outcomes) : undefined;
    const appended = await store.appendEvents({
      ownerId: source.ownerId,
      emitterId: source.id,
      emits: outcomes.flatMap((outcome) => outcome.emits),
      dedupe,
      retention: source.retention,
      now,
      sourceDb: db,
      logs,
      // The same lines, for `$logs` listeners (the store appends them as events only when one listens).
      logEvents: logs,
      ...(completes.length > 0 ? { completes } : {}),
      ...(ticks.length > 0 ? { ticks } : {}),
      ...(claim ? { claim } : {}),
      ...(held ? { held } : {}),
    });
    if (appended.events.length > 0) this.metrics.eventsEmitted("source", appended.events.length);
    if (appended.repeatedTicks) this.options.logger.info({ sourceId: source.id, dueAt: appended.repeatedTicks }, "timer tick run again (its worker died, or it came twice) was recorded before: its events were not appended again");
    const byCall: StoredEvent[][] = outcomes.map(() => []);
    appended.events.forEach((event, index) => byCall[owners.get(appended.accepted[index]!) ?? 0]!.push(event));
    for (const log of appended.logs) hub.publish(source.id, { kind: "log", item: log });
    // What only the append could tell (an emit its dedupe could not take) is logged after it: rare.
    const refused = appended.rejected.filter((rejection) => !rejection.duplicate).map((rejection) => `An event was not emitted: ${rejection.reason}`);
    if (refused.length > 0) await this.writeLogs(source, logEntries([], refused, now));
    for (const event of [...appended.events, ...(appended.logEvents ?? [])]) hub.publish(source.id, { kind: "event", channel: event.channel, item: event });
    // Deliveries recorded claimed go to the worker in hand; others are claimed, and only when there are some:
    // a source nobody listens to costs the worker nothing.
    if (appended.laterAt !== undefined) this.options.handOff?.dueAt?.(appended.laterAt);
    if (appended.claimed) {
      if (appended.claimed.length > 0) this.options.handOff?.take(appended.claimed);
    } else if (appended.deliveries > 0) this.options.onAppended?.();
    return byCall;
  }

  /** Counted once committed: a call whose commit failed is counted when it is committed alone (CommitChains). */
  private countRuns(outcomes: CallOutcome[]): void {
    for (const { trigger, result } of outcomes) {
      const kind = trigger ? RUN_TRIGGERS[trigger] : undefined;
      if (!kind) continue;
      this.metrics.runEnded({ kind: "source", trigger: kind, outcome: result.ok ? "success" : "error", durationMs: result.durationMs, errorCode: result.error?.code });
    }
  }

  private async writeLogs(source: DeployedSource, entries: LogLine[]): Promise<void> {
    if (entries.length === 0) return;
    try {
      const logs = await this.options.store.appendLogs(source.ownerId, source.id, entries);
      for (const log of logs) this.options.hub.publish(source.id, { kind: "log", item: log });
    } catch (error) {
      this.options.logger.error({ err: error, sourceId: source.id }, "could not store a source's logs");
    }
  }
}

/** The emits whose deliveries to some listeners are handed over without a row (CallOutcome.holdFor); undefined when none. */
function heldEmits(outcomes: CallOutcome[]): Map<PendingEmit, readonly string[]> | undefined {
  let held: Map<PendingEmit, readonly string[]> | undefined;
  for (const outcome of outcomes) {
    if (!outcome.holdFor || outcome.emits.length !== 1) continue;
    (held ??= new Map()).set(outcome.emits[0]!, outcome.holdFor);
  }
  return held;
}
