import { randomUUID, timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import { ConflictError, NotFoundError } from "../../domain/errors.js";
import { CANCELLABLE_RUN_STATUSES } from "../../domain/run-flow.js";
import type { WorkflowRun } from "../../domain/workflows.js";
import type { JobQueue } from "../../queue/job-queue.js";
import type { Store } from "../../store/store.js";
import type { LiveTransport } from "../event-hub.js";

/** The live channel of cancels of running runs. Emitter ids never start with `$`, so it is nobody's stream. */
export const CANCEL_CHANNEL = "$runnel:cancel";
/** How long a cancel waits for the process running the run to say it has it. */
const RUNNING_CANCEL_WAIT_MS = 1_500;
/** How long a cancel of a waiting event waits for a process whose chain holds it to answer (it answers at once). */
const FOLLOWER_CANCEL_WAIT_MS = 500;
/** A delivery not waiting in the queue yet (its claim is still putting it back) is hurried again this often, this many times. */
const HURRY_TRIES = 20;
const HURRY_PAUSE_MS = 100;

/** What a cancel did: a waiting run is cancelled now (its row); a running one stops at its next step, in the process that runs it. */
export type CancelOutcome = { kind: "cancelled"; run: WorkflowRun } | { kind: "cancelling"; runId: string };

/** The request a resume URL received: the resumed step reads it as `$.context.run.callback_request`. */
export interface CallbackRequest {
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface RunControlOptions {
  store: Store;
  queue: Pick<JobQueue, "hurry">;
  /** This process's runs in progress (none in an api process), and the followers its chains hold. */
  executor: { cancelInProgress(ownerId: string, runId: string, by: string): boolean; cancelQueuedFollower?(ownerId: string, workflowId: string, eventId: string, by: string): WorkflowRun | null };
  /** The channel between processes; null when this process is alone. */
  across: LiveTransport | null;
  /** Deliveries were made due now: this process's worker (and the others') look at once. */
  onHurried(): void;
  logger: Logger;
  now?: () => number;
}

/**
 * Cancel and resume of runs (issue 19). A waiting run (`delayed`,
 * `retrying`) is its row: a cancel rewrites it as `cancelled` (while it is
 * still the attempt that waits) and makes its delivery due now, so that the
 * delivery is settled at once without running anything (the executor finds
 * the cancelled row). A running run is cancelled in the process that runs it
 * (RunExecutor.cancelInProgress, reached across processes on CANCEL_CHANNEL):
 * it stops before its next step and is recorded `cancelled`. A resume URL
 * makes a delayed run's delivery due now.
 */
export class RunControl {
  private readonly now: () => number;

  constructor(private readonly options: RunControlOptions) {
    this.now = options.now ?? Date.now;
  }

  async cancel(ownerId: string, runId: string, by: string, tries = 0): Promise<CancelOutcome> {
    const { store } = this.options;
    const row = await store.findRun(ownerId, runId);
    if (row && CANCELLABLE_RUN_STATUSES.includes(row.status)) {
      const now = this.now();
      const cancelled = await store.updateWaitingRun(ownerId, runId, row.attempt ?? 1, {
        status: "cancelled",
        steps: row.steps.map((step) => ({ ...step, sends: step.sends.map((send) => (send.status === "pending" ? { ...send, status: "not_sent" as const, detail: "the run was cancelled, so its sends were dropped" } : send)) })),
        continuation: null,
        nextAttemptAt: null,
        finishedAt: now,
        durationMs: Math.max(0, now - row.startedAt),
        cancelledBy: by,
      });
      if (cancelled) {
        // Its delivery is settled now rather than at its due time; an execution resuming it this moment stops too.
        void this.hurry(row);
        void this.askProcesses(ownerId, runId, by, 0);
        return { kind: "cancelled", run: (await store.findRun(ownerId, runId)) ?? row };
      }
      // Recorded again since it was read (it resumed and ended, or was cancelled): answered by what it is now.
      if (tries < 3) return this.cancel(ownerId, runId, by, tries + 1);
    }
    // An event waiting at a gate has no run id yet: it is cancelled by its event id (routes/run-gate.ts).
    if (row) throw new ConflictError(`Run ${runId} has ended already (${row.status}), so there is nothing to cancel. Only a delayed, retrying or running run can be cancelled.`);
    if (this.options.executor.cancelInProgress(ownerId, runId, by) || (await this.askProcesses(ownerId, runId, by, RUNNING_CANCEL_WAIT_MS))) return { kind: "cancelling", runId };
    throw new NotFoundError("recorded or running run", runId);
  }

  /** A resume URL: the delayed run resumes now (with the request, for its step to read). */
  async resumeByToken(ownerId: string, runId: string, token: string, request: CallbackRequest): Promise<WorkflowRun> {
    const row = await this.waitingByToken(ownerId, runId, token);
    if (row.status !== "delayed") throw new ConflictError(`Run ${runId} is not delayed (${row.status}): only a delayed run can be resumed.`);
    const flow = row.continuation!.flow!;
    const changed = await this.options.store.updateWaitingRun(ownerId, runId, row.attempt ?? 1, { continuation: { ...row.continuation!, flow: { ...flow, callbackRequest: request } }, nextAttemptAt: this.now() });
    if (!changed) throw new ConflictError(`Run ${runId} resumed or ended before this request; nothing was changed.`);
    void this.hurry(row);
    return (await this.options.store.findRun(ownerId, runId)) ?? row;
  }

  /** A cancel URL: the delayed run is cancelled (by "cancel_url"). */
  async cancelByToken(ownerId: string, runId: string, token: string): Promise<CancelOutcome> {
    await this.waitingByToken(ownerId, runId, token);
    return this.cancel(ownerId, runId, "cancel_url");
  }

  /** Listens for cancels of running runs from other processes (a worker); returns the function that stops. */
  async listen(): Promise<() => Promise<void>> {
    const across = this.options.across;
    if (!across) return async () => undefined;
    return across.subscribe(CANCEL_CHANNEL, (message) => {
      if (message.kind !== "event") return;
      const request = message.item as { ownerId?: unknown; runId?: unknown; workflowId?: unknown; eventId?: unknown; by?: unknown; reply?: unknown };
      if (typeof request.ownerId !== "string" || typeof request.by !== "string") return;
      if (typeof request.workflowId === "string" && typeof request.eventId === "string" && typeof request.reply === "string") {
        const run = this.options.executor.cancelQueuedFollower?.(request.ownerId, request.workflowId, request.eventId, request.by);
        if (!run) return;
        across.publish(`${CANCEL_CHANNEL}:${request.reply}`, { kind: "event", channel: "cancelled", item: { run } }).catch((error: unknown) => this.options.logger.warn({ err: error }, "could not tell the process that asked that a waiting event is cancelled"));
        return;
      }
      if (typeof request.runId !== "string") return;
      if (!this.options.executor.cancelInProgress(request.ownerId, request.runId, request.by) || typeof request.reply !== "string") return;
      across.publish(`${CANCEL_CHANNEL}:${request.reply}`, { kind: "event", channel: "cancelled", item: { runId: request.runId } }).catch((error: unknown) => this.options.logger.warn({ err: error }, "could not tell the process that asked that a run is being cancelled"));
    });
  }

  /**
   * An event waiting at a gate that a one-at-a-time line's chain holds as a
   * follower, not started (RunExecutor.cancelQueuedFollower): cancelled by the
   * process whose chain holds it, this one or another (asked on
   * CANCEL_CHANNEL). Answers its run as the chain records it, or null when no
   * process holds it so.
   */
  async cancelFollower(ownerId: string, workflowId: string, eventId: string, by: string): Promise<WorkflowRun | null> {
    const here = this.options.executor.cancelQueuedFollower?.(ownerId, workflowId, eventId, by);
    if (here) return here;
    return this.askOthers({ ownerId, workflowId, eventId, by }, FOLLOWER_CANCEL_WAIT_MS, (item) => (item as { run?: WorkflowRun } | undefined)?.run, "a waiting event");
  }

  /** The run the URL names, when its token is the one it waits with; anything else is not found (the URL says nothing more). */
  private async waitingByToken(ownerId: string, runId: string, token: string): Promise<WorkflowRun> {
    const row = await this.options.store.findRun(ownerId, runId).catch(() => null);
    const expected = row?.continuation?.flow?.token;
    if (!row || !expected || !sameToken(expected, token)) {
      // The same answer whether the run exists or not: the link proves nothing else.
      throw new NotFoundError("delayed run at this link (it resumed, ended or was cancelled, or the link is incomplete)", runId);
    }
    return row;
  }

  /**
   * Makes the run's delivery due now. Right after the run was recorded
   * waiting, its delivery may still be held by the claim that ran it (put
   * back in the queue just after the record): tried again for a moment then.
   */
  private async hurry(row: WorkflowRun): Promise<void> {
    const key = { listenerId: row.workflowId, emitterId: row.emitterId, eventId: row.eventId };
    try {
      for (let tries = 0; tries < HURRY_TRIES; tries++) {
        if ((await this.options.queue.hurry([key])) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, HURRY_PAUSE_MS));
      }
      this.options.onHurried();
    } catch (error) {
      // The row says what to do; the delivery does it at its own due time.
      this.options.logger.warn({ err: error, runId: row.id }, "could not make a waiting run's delivery due now; it is settled at its due time");
    }
  }

  /**
   * Asks every process to cancel the run if it runs it; with `waitMs`, waits
   * that long for one to say it does (true), else false.
   */
  private async askProcesses(ownerId: string, runId: string, by: string, waitMs: number): Promise<boolean> {
    return (await this.askOthers({ ownerId, runId, by }, waitMs, (item) => ((item as { runId?: unknown } | undefined)?.runId === runId ? true : undefined), "a run")) ?? false;
  }

  /**
   * Publishes a cancel request on CANCEL_CHANNEL and, with `waitMs`, waits
   * that long for the first reply `pick` makes something of; null without
   * one (or without other processes, or when the channel failed).
   */
  private async askOthers<T>(request: Record<string, string>, waitMs: number, pick: (item: unknown) => T | undefined, what: string): Promise<T | null> {
    const across = this.options.across;
    if (!across) return null;
    const reply = randomUUID();
    let answered: (value: T) => void = () => undefined;
    const answer = new Promise<T>((resolve) => (answered = resolve));
    const stop =
      waitMs > 0
        ? await across.subscribe(`${CANCEL_CHANNEL}:${reply}`, (message) => {
            const value = message.kind === "event" ? pick(message.item) : undefined;
            if (value !== undefined) answered(value);
          })
        : null;
    let timer: NodeJS.Timeout | undefined;
    try {
      await across.publish(CANCEL_CHANNEL, { kind: "event", channel: "cancel", item: { ...request, reply } });
      if (!stop) return null;
      const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
      return await Promise.race([answer, timedOut]);
    } catch (error) {
      this.options.logger.warn({ err: error, ...request }, `could not ask the other processes to cancel ${what}`);
      return null;
    } finally {
      clearTimeout(timer);
      await stop?.().catch(() => undefined);
    }
  }
}

function sameToken(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
