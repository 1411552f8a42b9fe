import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { NotFoundError, UnavailableError } from "../../domain/errors.js";
import { processStateOf } from "../../domain/processes.js";
import type { DeployedSource, StoredEvent } from "../../domain/sources.js";
import type { SandboxError } from "../../sandbox/sandbox-error.js";
import type { Store } from "../../store/store.js";
import type { LiveTransport } from "../event-hub.js";
import { PieceAssembler, toPieces } from "../message-pieces.js";
import { MANUAL_RUN_CHANNEL, manualRunDelivery } from "../workflows/manual-run.js";
import type { InvocationResult } from "./result-writer.js";

/**
 * A source's "run now" in a cluster: the api process that takes the request
 * queues the run as a durable delivery to the source (channel `$run`, like a
 * workflow's manual run), a worker runs it (SourceListener), commits its
 * events with the delivery's removal, and publishes how it went with the
 * events it stored (a source keeping few events may have trimmed them from
 * the store already); the api process waiting for it answers as it would
 * have had it run the source itself.
 */

/** The live channel the outcomes travel on; emitter ids never start with `$`, so it is nobody's stream. */
export const SOURCE_RUNS_CHANNEL = "$runnel:source-runs";

/** What a source's manual-run delivery carries: the event `run` gets, and who waits for the outcome. */
export interface SourceRunBody {
  event: unknown;
  request_id: string;
}

/** How a handed-over run went, as JSON carries it: a large one travels in pieces. */
export type SourceRunOutcome = { kind: "ran"; ok: boolean; durationMs: number; error?: SandboxError; events: StoredEvent[] } | { kind: "gone" };

/** Is this delivery a source's manual run (rather than an event it subscribed to)? */
export function isSourceRun(channel: string): boolean {
  return channel === MANUAL_RUN_CHANNEL;
}

export interface ManualRunsOnWorkersOptions {
  store: Store;
  transport: LiveTransport;
  logger: Logger;
  /** How long the api process waits for a worker's outcome of a source's run before answering 503. */
  waitMs: (source: DeployedSource) => number;
  /** Tells the workers there is work (the wake-up of appended deliveries). */
  onAppended: () => void;
  now?: () => number;
}

export class ManualRunsOnWorkers {
  private readonly waiting = new Map<string, (outcome: SourceRunOutcome) => void>();
  // Every api process hears every outcome; only the one holding the caller keeps it.
  private readonly assembler = new PieceAssembler(
    (requestId, outcome) => this.waiting.get(requestId)?.(outcome as SourceRunOutcome),
    (requestId) => this.waiting.has(requestId),
  );

  constructor(private readonly options: ManualRunsOnWorkersOptions) {}

  /** The api side: queues the run for a worker and resolves with its result, as a run in this process would. */
  async run(source: DeployedSource, event: unknown): Promise<InvocationResult> {
    const { store } = this.options;
    const waitMs = this.options.waitMs(source);
    const now = (this.options.now ?? Date.now)();
    // No worker beats in the registry: nobody would take the run, so say so at once rather than after the wait,
    // and queue nothing (a worker started later would otherwise run a "run now" its caller gave up on).
    if (!(await this.aWorkerIsLive(now))) {
      throw new UnavailableError(
        `Source ${source.nameSlug} (${source.id}) cannot run now: no worker process of this installation is running (none has sent a heartbeat lately; runnel status lists the processes). ` +
          "Start one (runnel server --role worker) and try again; nothing was queued.",
        5,
      );
    }
    const requestId = randomBytes(12).toString("hex");
    const outcome = this.waitFor(requestId, source, waitMs);
    const body: SourceRunBody = { event, request_id: requestId };
    try {
      // Unique across api processes (the key is listener, emitter, event id): two runs in one millisecond stay two.
      await store.enqueueDeliveries([manualRunDelivery(source, `${now}-${parseInt(requestId.slice(0, 12), 16)}`, body, now)]);
    } catch (error) {
      this.waiting.delete(requestId);
      throw error;
    }
    this.options.onAppended();
    const settled = await outcome;
    if (settled.kind === "gone") throw new NotFoundError("source", source.id);
    return { ok: settled.ok, durationMs: settled.durationMs, events: settled.events, ...(settled.error ? { error: settled.error } : {}) };
  }

  /** Whether a process that runs deliveries (a worker, or a process of every role) beats in the registry. */
  private async aWorkerIsLive(now: number): Promise<boolean> {
    const processes = await this.options.store.listProcesses();
    return processes.some((process) => process.role !== "api" && processStateOf(process, now) === "live");
  }

  /** The worker side: tells the api process waiting for `requestId` how its run went. */
  report(requestId: string, outcome: SourceRunOutcome): void {
    for (const piece of toPieces(requestId, outcome)) {
      this.options.transport.publish(SOURCE_RUNS_CHANNEL, { kind: "event", channel: "", item: piece }).catch((error: unknown) =>
        // The caller then gets a 503 at its wait's end: said here so an operator can tell why.
        this.options.logger.warn({ err: error, requestId }, "a source's manual run finished but its outcome could not be sent to the api process waiting for it"),
      );
    }
  }

  /** The api side: listens for outcomes until the returned function is called. */
  async listen(): Promise<() => Promise<void>> {
    const stop = await this.options.transport.subscribe(SOURCE_RUNS_CHANNEL, (message) => {
      if (message.kind === "event") this.assembler.take(message.item);
    });
    return async () => {
      await stop();
      this.assembler.clear();
    };
  }

  private waitFor(requestId: string, source: DeployedSource, waitMs: number): Promise<SourceRunOutcome> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(requestId);
        reject(
          new UnavailableError(
            `Source ${source.nameSlug} (${source.id}) was queued to run on a worker, but no worker reported back within ${Math.round(waitMs / 1000)} s. ` +
              "Check that a worker process is running (runnel status); the run may still happen: look at the source's logs and events.",
            5,
          ),
        );
      }, waitMs);
      this.waiting.set(requestId, (outcome) => {
        clearTimeout(timer);
        this.waiting.delete(requestId);
        resolve(outcome);
      });
    });
  }
}
