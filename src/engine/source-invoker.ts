import type { Logger } from "pino";
import type { ValidatedComponent } from "../domain/component-rules.js";
import type { PendingEmit } from "../domain/dedupe.js";
import { orderEmits, validateEmitMeta } from "../domain/emit-order.js";
import type { DeployedSource, LogEntry, SavedComponent, StoredEvent } from "../domain/sources.js";
import type { HttpResponse } from "../sandbox/http-response.js";
import type { ComponentCall } from "../sandbox/protocol.js";
import type { InvokeResult, Sandbox } from "../sandbox/sandbox.js";
import type { SandboxError } from "../sandbox/sandbox-error.js";
import type { Store } from "../store/store.js";
import type { ComponentLoader } from "./component-loader.js";
import type { EventHub } from "./event-hub.js";
import { KeyedMutex } from "./keyed-mutex.js";
import type { SecretBox } from "./secrets.js";
import { runtimeProps } from "./source-props.js";

/** What started a call; it decides the time limit. */
export type Trigger = "http" | "timer" | "manual" | "hook" | "options";

/** Limits of user code (the hosted service's defaults: 30 s for HTTP, 60 s for timers, 256 MB). */
export interface RunLimits {
  httpTimeoutMs: number;
  runTimeoutMs: number;
  memoryMb: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = { httpTimeoutMs: 30_000, runTimeoutMs: 60_000, memoryMb: 256 };

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
  limits?: RunLimits;
  now?: () => number;
}

/**
 * Runs a deployed source's code in the sandbox and makes what it did durable:
 * its events (deduped, in one transaction with its key-value store), its logs
 * and its errors. Calls of one source run one at a time, so each sees the
 * store the previous one left.
 */
export class SourceInvoker {
  readonly mutex = new KeyedMutex();
  private readonly now: () => number;

  constructor(private readonly options: SourceInvokerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Runs `call` on a stored source and commits its effects. */
  invoke(source: DeployedSource, call: ComponentCall, trigger: Trigger, onRespond?: (response: HttpResponse) => void): Promise<InvocationResult> {
    return this.mutex.run(source.id, async () => {
      const component = await this.componentOf(source);
      const db = await this.options.store.readSourceDb(source.ownerId, source.id);
      const outcome = await this.call(source, component, call, trigger, db, onRespond);
      const events = await this.commit(source, outcome, component.validated.dedupe);
      const invocation: InvocationResult = { ok: outcome.result.ok, events, durationMs: outcome.result.durationMs };
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
    if (call.kind === "run" && !component.validated.hasRun) {
      // A plain schedule: a timer source without run emits the timer event itself.
      return { result: { ok: true, emits: [], db: null, logs: [], durationMs: 0 }, emits: [{ event: call.event }], problems: [] };
    }
    const { props, dbProps } = runtimeProps(component.validated, source, this.options.secrets, this.options.endpointUrl(source));
    const bundle = await this.options.loader.runnerBundle(component.saved);
    const limits = this.options.limits ?? DEFAULT_RUN_LIMITS;
    const timeoutMs = trigger === "http" || trigger === "options" ? limits.httpTimeoutMs : limits.runTimeoutMs;
    const result = await this.options.sandbox.invoke(
      { bundle, call, props, dbProps, db, limits: { timeoutMs, memoryMb: limits.memoryMb, maxLogBytes: 1024 * 1024 } },
      onRespond ? { onRespond } : {},
    );
    const problems: string[] = [];
    const checked: PendingEmit[] = [];
    for (const emit of result.emits) {
      const problem = validateEmitMeta(emit.meta);
      if (problem) problems.push(`An event was not emitted: ${problem}`);
      else checked.push({ event: emit.event, ...emit.meta } as PendingEmit);
    }
    return { result, emits: orderEmits(checked), problems };
  }

  /** Appends the call's events and store in one transaction, then its logs; tells live listeners. */
  async commit(source: DeployedSource, outcome: CallOutcome, dedupe: ValidatedComponent["dedupe"]): Promise<StoredEvent[]> {
    const { store, hub } = this.options;
    const appended = await store.appendEvents({
      ownerId: source.ownerId,
      emitterId: source.id,
      emits: outcome.emits,
      dedupe,
      retention: source.retention,
      now: this.now(),
      sourceDb: outcome.result.db,
    });
    const problems = [...outcome.problems, ...appended.rejected.filter((r) => !r.duplicate).map((r) => `An event was not emitted: ${r.reason}`)];
    await this.writeLogs(source, outcome.result, problems);
    for (const event of appended.events) hub.publish(source.id, { kind: "event", channel: event.channel, item: event });
    return appended.events;
  }

  /** The source's saved component and its validated form. */
  async componentOf(source: DeployedSource): Promise<{ saved: SavedComponent; validated: ValidatedComponent }> {
    const saved = await this.options.store.findComponent(source.ownerId, source.componentId);
    if (!saved) throw new Error(`The component ${source.componentId} of source ${source.id} is missing.`);
    return { saved, validated: this.options.loader.validatedOf(saved) };
  }

  private async writeLogs(source: DeployedSource, result: InvokeResult, problems: string[]): Promise<void> {
    const at = this.now();
    const entries: Array<Pick<LogEntry, "stream" | "text" | "ts">> = result.logs.map((log) => ({ stream: log.stream, text: log.text, ts: log.ts }));
    for (const problem of problems) entries.push({ stream: "system", text: problem, ts: at });
    if (result.error) entries.push({ stream: "stderr", text: describeError(result.error), ts: at });
    if (entries.length === 0) return;
    try {
      const logs = await this.options.store.appendLogs(source.ownerId, source.id, entries);
      for (const log of logs) this.options.hub.publish(source.id, { kind: "log", item: log });
    } catch (error) {
      this.options.logger.error({ err: error, sourceId: source.id }, "could not store a source's logs");
    }
  }
}

/** An error as a source's logs show it: name, message, then the stack. */
export function describeError(error: SandboxError): string {
  const head = `${error.name}: ${error.message}`;
  if (!error.stack) return `${head} [${error.code}]`;
  return error.stack.startsWith(head) ? `${error.stack} [${error.code}]` : `${head}\n${error.stack} [${error.code}]`;
}
