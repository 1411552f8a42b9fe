import type { Logger } from "pino";
import { sendRetryDelay, type OutboxSend, type SendRetryPolicy, type SendSettlement } from "../../domain/durable-sends.js";
import type { Workflow } from "../../domain/workflows.js";
import type { EventBatch, Store } from "../../store/store.js";
import type { EventHub } from "../event-hub.js";
import { UndeliverableSendError, type Destinations } from "./destinations.js";
import { destinationFailedAppend } from "./send-failure.js";
import { WakeSignal } from "../wake-signal.js";

export interface SendOutboxWorkerOptions {
  store: Store;
  destinations: Destinations;
  hub: EventHub;
  logger: Logger;
  retry: SendRetryPolicy;
  /** This process's instance id, recorded with its leases (see Store.requeueSends). */
  claimer?: string | undefined;
  /** How long a claimed send is ours before another claimer may take it (its process died). Default 10 min. */
  leaseMs?: number;
  /** How often the outbox is looked at when nothing woke the worker (retries coming due, other processes' sends). Default 1 s. */
  pollMs?: number;
  /** Sends claimed at once. Default 32. */
  batchSize?: number;
  /** Runs whose sends are carried out side by side. Default 8. */
  concurrency?: number;
  /** A final failure appended a `$errors` event that listeners (the error workflow) are now waiting for. */
  onAppended?: () => void;
  now?: () => number;
}

const DEFAULT_LEASE_MS = 600_000;

/**
 * Carries out the sends of recorded runs from the send outbox: claims due
 * sends (leased), carries out each run's in the order its steps made them,
 * and settles each attempt in one transaction with the run's send record:
 * removed once delivered, due again after a backoff when it failed, and
 * after the last attempt removed with a `DestinationFailed` error of the
 * workflow. A process killed mid-send leaves its sends leased; the embedded
 * server requeues them at start, a cluster when the lease runs out; the
 * repeated attempt carries the same idempotency key.
 */
export class SendOutboxWorker {
  private readonly running = new Set<Promise<void>>();
  private readonly now: () => number;
  private loop: Promise<void> | null = null;
  private stopped = false;
  private readonly signal = new WakeSignal();
  private retryTimer: { at: number; timer: NodeJS.Timeout } | null = null;

  constructor(private readonly options: SendOutboxWorkerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Starts carrying out sends; `requeue` as DeliveryWorker.start: "all" (embedded), "own" (this instance's leases of its last run). */
  async start({ requeue }: { requeue: "all" | "own" | false }): Promise<void> {
    if (requeue === "all" || (requeue === "own" && this.options.claimer)) {
      const count = await this.options.store.requeueSends(this.now(), requeue === "own" ? this.options.claimer : undefined);
      if (count > 0) this.options.logger.info({ count }, "$.send calls interrupted by the last stop are tried again (with the same idempotency keys)");
    }
    this.loop ??= this.run();
  }

  /** Sends were put in the outbox: look now rather than at the next poll. */
  wake(): void {
    this.signal.wake();
  }

  /** Stops claiming and waits for the attempts in flight to be settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    this.signal.interrupt();
    await this.loop;
    await Promise.all(this.running);
  }

  private async run(): Promise<void> {
    const concurrency = this.options.concurrency ?? 8;
    const batchSize = this.options.batchSize ?? 32;
    while (!this.stopped) {
      if (this.running.size >= concurrency) {
        await Promise.race(this.running);
        continue;
      }
      this.signal.clear();
      let claimed: OutboxSend[];
      try {
        claimed = await this.options.store.claimSends({ now: this.now(), leaseMs: this.options.leaseMs ?? DEFAULT_LEASE_MS, limit: batchSize, claimer: this.options.claimer });
      } catch (error) {
        if (this.stopped) break;
        this.options.logger.error({ err: error }, "could not claim $.send calls; trying again shortly");
        await this.idle();
        continue;
      }
      for (const sends of byRun(claimed)) this.track(this.carryOutRun(sends));
      if (claimed.length < batchSize && !this.signal.pending) await this.idle();
    }
  }

  private track(task: Promise<void>): void {
    const tracked = task.finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /** Waits for a wake, the poll interval, or a free slot when all were busy. */
  private idle(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return this.signal.sleep(this.options.pollMs ?? 1_000).then(() => undefined);
  }

  /** Wakes the loop when a retry comes due before the next poll would find it. */
  private wakeAt(at: number): void {
    if (this.stopped || (this.retryTimer && this.retryTimer.at <= at)) return;
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    const timer = setTimeout(() => {
      this.retryTimer = null;
      this.wake();
    }, Math.max(0, at - this.now()));
    timer.unref();
    this.retryTimer = { at, timer };
  }

  /** One run's sends, one after the other; a failure does not hold back the others. */
  private async carryOutRun(sends: OutboxSend[]): Promise<void> {
    const first = sends[0]!;
    let workflow: Workflow | null;
    try {
      workflow = await this.options.store.findWorkflow(first.ownerId, first.workflowId);
    } catch (error) {
      // Left leased: due again when the lease runs out (or at the next start).
      this.options.logger.error({ err: error, runId: first.runId }, "could not read the workflow of $.send calls");
      return;
    }
    for (const send of sends) {
      try {
        await this.attempt(workflow, send);
      } catch (error) {
        this.options.logger.error({ err: error, sendId: send.id }, "could not settle a $.send attempt; it is tried again when its lease runs out");
      }
    }
  }

  private async attempt(workflow: Workflow | null, send: OutboxSend): Promise<void> {
    const { store, destinations, retry } = this.options;
    let settlement: SendSettlement;
    let errorEvent: EventBatch | undefined;
    if (!workflow) {
      // Deleted since (its outbox went with it, unless this claim came first): nobody to send for.
      settlement = { outcome: "failed", error: "the workflow was deleted" };
    } else {
      try {
        settlement = { outcome: "delivered", detail: await destinations.deliver(workflow, send) };
      } catch (thrown) {
        const error = thrown instanceof Error ? thrown.message : String(thrown);
        // One that would fail the same way again is given up at once.
        const delay = thrown instanceof UndeliverableSendError ? null : sendRetryDelay(send.attempts, retry);
        if (delay === null) {
          settlement = { outcome: "failed", error };
          errorEvent = destinationFailedAppend(workflow, send, error, this.now());
        } else settlement = { outcome: "retry", error, retryAt: this.now() + delay };
      }
    }
    const { settled, appended } = await store.settleSend(send, settlement, errorEvent);
    if (!settled || !workflow) return;
    if (settlement.outcome === "retry") this.wakeAt(settlement.retryAt);
    for (const event of appended?.events ?? []) this.options.hub.publish(workflow.id, { kind: "event", channel: event.channel, item: event });
    if (appended && appended.deliveries > 0) this.options.onAppended?.();
    await this.log(workflow, send, settlement).catch((error) => this.options.logger.warn({ err: error }, "could not write a $.send attempt to the workflow's logs"));
  }

  /** What the attempt did, in the workflow's logs (`GET /v1/workflows/<id>/logs`). */
  private async log(workflow: Workflow, send: OutboxSend, settlement: SendSettlement): Promise<void> {
    const what = `$.send.${send.type} of run ${send.runId}`;
    const attempts = `attempt ${send.attempts} of ${this.options.retry.maxAttempts}`;
    let line: { stream: "system" | "stderr"; text: string } | null;
    switch (settlement.outcome) {
      case "delivered":
        line = settlement.detail ? { stream: "system", text: `${what}: ${settlement.detail}` } : null;
        break;
      case "retry":
        line = { stream: "stderr", text: `${what} failed: ${settlement.error} (${attempts}; trying again in ${duration(sendRetryDelay(send.attempts, this.options.retry) ?? 0)})` };
        break;
      case "failed":
        this.options.logger.info({ workflowId: workflow.id, sendId: send.id, attempts: send.attempts, error: settlement.error }, "a $.send call was given up");
        line = { stream: "stderr", text: `${what} failed: ${settlement.error} (${attempts}; given up, recorded as a DestinationFailed error in $errors)` };
        break;
    }
    if (!line) return;
    const logs = await this.options.store.appendLogs(workflow.ownerId, workflow.id, [{ ...line, ts: this.now() }]);
    for (const item of logs) this.options.hub.publish(workflow.id, { kind: "log", item });
  }
}

/** Claimed sends by run, each run's in order (the claim answers them so). */
function byRun(sends: OutboxSend[]): OutboxSend[][] {
  const groups = new Map<string, OutboxSend[]>();
  for (const send of sends) {
    const group = groups.get(send.runId);
    if (group) group.push(send);
    else groups.set(send.runId, [send]);
  }
  return [...groups.values()];
}

/** A backoff as people read it: `50 ms`, `10 s`, `8 min`. */
function duration(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 6_000) / 10} min`;
}
