/**
 * What the host gathers of one call while it runs: logs (within the call's
 * limit), emitted events, and the one HTTP response, handed on at once.
 */
import type { Logger } from "pino";
import type { HttpResponse } from "./http-response.js";
import { MAX_LOG_ENTRIES, type Limits } from "./limits.js";
import type { DataStoreAnswer, DataStoreRequest, DbSnapshot, EmitMeta, LogStream, StepDone, StepOutcome } from "./protocol.js";
import type { SandboxError } from "./sandbox-error.js";

export interface LogEntry {
  stream: LogStream;
  text: string;
  ts: number;
}

export interface EmittedEvent {
  event: unknown;
  meta: EmitMeta;
}

export interface CallOutcome {
  ok: boolean;
  value?: unknown;
  error?: SandboxError;
  db: DbSnapshot | null;
  emits: EmittedEvent[];
  logs: LogEntry[];
  /** A step call's record, as the runner reported it with its result or error. */
  step?: StepOutcome;
  /** How long the call ran, as the runner measured it. */
  ms?: number;
  /** A `steps` call: each step that ended, in order (a step the runner died in is not among them). */
  chain?: StepDone[];
}

export type CallEnding = Pick<CallOutcome, "ok" | "value" | "error" | "db" | "step" | "ms">;

/** Refreshes an account the call was given (`$auth.refresh()`), answering its fields; refuses any other account. */
export type AuthRefreshHandler = (account: string, stale: string | null) => Promise<Record<string, string>>;

/** Carries out a call's data store request (the engine's, bound to the call's owner and the stores its props name). */
export type DataStoreHandler = (store: string, request: DataStoreRequest) => Promise<unknown>;

/**
 * Data store requests of one call waiting for the host, at most: a call that
 * does not await its calls (a loop of set() without await) is told to, rather
 * than filling the host's memory.
 */
export const MAX_WAITING_STORE_REQUESTS = 64;

export class CallCollector {
  readonly id: number;
  readonly limits: Limits;
  finished = false;
  private readonly emits: EmittedEvent[] = [];
  private readonly logs: LogEntry[] = [];
  private readonly chain: StepDone[] = [];
  /** Raw stderr entries, left out again when they turn out to be V8's crash report. */
  private readonly rawStderr = new Set<LogEntry>();
  private readonly onRespond: ((response: HttpResponse) => void) | undefined;
  private readonly logger: Logger | undefined;
  private logBytes = 0;
  private responded = false;
  private rawTruncated = false;
  private readonly onStore: DataStoreHandler | undefined;
  /** The call's data store requests run one after the other, in the order sent: a get sees the set before it. */
  private storeQueue: Promise<void> = Promise.resolve();
  private storeWaiting = 0;

  private readonly onAuth: AuthRefreshHandler | undefined;
  private authWaiting = 0;

  constructor(id: number, limits: Limits, onRespond: ((response: HttpResponse) => void) | undefined, logger: Logger | undefined, onStore?: DataStoreHandler, onAuth?: AuthRefreshHandler) {
    this.id = id;
    this.onStore = onStore;
    this.onAuth = onAuth;
    this.limits = limits;
    this.onRespond = onRespond;
    this.logger = logger;
  }

  /**
   * A line the runner captured. The host keeps its own count, so the limit
   * does not depend on the runner's honesty. Returns the error that ends the
   * call when the line passes the limit.
   */
  addLog(stream: LogStream, text: string, ts: number): SandboxError | undefined {
    this.logBytes += Buffer.byteLength(text) + 1;
    if (this.logBytes > this.limits.maxLogBytes || this.logs.length >= MAX_LOG_ENTRIES) {
      const message = `The component printed more than its log limit (${this.limits.maxLogBytes} bytes or ${MAX_LOG_ENTRIES} lines); the call was stopped.`;
      return { code: "OutputFlood", name: "OutputFlood", message };
    }
    this.logs.push({ stream, text, ts });
    return undefined;
  }

  /**
   * Output that bypassed the runner's capture (fs.writeSync(1, …), V8's fatal
   * errors): it counts toward the log limit like captured output, and
   * returns the error that ends the call when it passes it. (A crash report
   * is a few KB: it turns a crash into a flood only for a call already at its
   * limit.)
   */
  addRawOutput(stream: LogStream, text: string): SandboxError | undefined {
    if (this.rawTruncated) return undefined;
    // Chunks are at most the pipe's read size (64 KB), so text.length bounds the bytes closely enough.
    const cost = text.length + 1;
    if (this.logBytes + cost > this.limits.maxLogBytes || this.logs.length >= MAX_LOG_ENTRIES) {
      this.rawTruncated = true;
      const message = `The component wrote more than its log limit (${this.limits.maxLogBytes} bytes or ${MAX_LOG_ENTRIES} lines), straight to its standard output or error; the call was stopped.`;
      return { code: "OutputFlood", name: "OutputFlood", message };
    }
    this.logBytes += cost;
    const entry: LogEntry = { stream, text: text.replace(/\n$/, ""), ts: Date.now() };
    this.logs.push(entry);
    if (stream === "stderr") this.rawStderr.add(entry);
    return undefined;
  }

  /** Carries out a data store request after those before it; `answer` gets its outcome (unless the call ended meanwhile). */
  storeRequest(store: string, request: DataStoreRequest, answer: (reply: DataStoreAnswer) => void): void {
    const handler = this.onStore;
    if (!handler) return answer({ ok: false, error: { name: "Error", message: "Data stores are not available to this call." } });
    if (this.storeWaiting >= MAX_WAITING_STORE_REQUESTS) {
      const message = `More than ${MAX_WAITING_STORE_REQUESTS} data store calls of this invocation are waiting; await each call (or a few at a time) before making more.`;
      return answer({ ok: false, error: { name: "RangeError", message } });
    }
    this.storeWaiting += 1;
    this.storeQueue = this.storeQueue.then(async () => {
      let reply: DataStoreAnswer;
      try {
        const value = this.finished ? undefined : await handler(store, request);
        reply = value === undefined ? { ok: true } : { ok: true, value };
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        reply = { ok: false, error: { name: failure.name, message: failure.message } };
      }
      this.storeWaiting -= 1;
      if (!this.finished) answer(reply);
    });
  }

  /** Carries out `$auth.refresh()`; `answer` gets the account's fields or why not (unless the call ended meanwhile). */
  authRequest(account: string, stale: string | null, answer: (reply: DataStoreAnswer) => void): void {
    const handler = this.onAuth;
    if (!handler) return answer({ ok: false, error: { name: "AuthError", message: "This call has no connected account to refresh." } });
    // A few at a time are plenty (one per app prop); more is a loop gone wrong.
    if (this.authWaiting >= 8) return answer({ ok: false, error: { name: "RangeError", message: "Too many $auth.refresh() calls are waiting; await each one." } });
    this.authWaiting += 1;
    void handler(account, stale).then(
      (fields) => {
        this.authWaiting -= 1;
        if (!this.finished) answer({ ok: true, value: fields });
      },
      (error: unknown) => {
        this.authWaiting -= 1;
        const failure = error instanceof Error ? error : new Error(String(error));
        if (!this.finished) answer({ ok: false, error: { name: failure.name, message: failure.message } });
      },
    );
  }

  addStepDone(done: StepDone): void {
    this.chain.push(done);
  }

  addEmit(event: unknown, meta: EmitMeta): void {
    this.emits.push({ event, meta });
  }

  /** Only the first response reaches the HTTP caller. */
  respond(response: HttpResponse): void {
    if (this.responded) return;
    this.responded = true;
    try {
      this.onRespond?.(response);
    } catch (error) {
      this.logger?.warn({ err: error }, "sandbox: the onRespond callback threw");
    }
  }

  outcome(ending: CallEnding): CallOutcome {
    // The out-of-memory report (GC trace, native stack) says nothing the error does not.
    const logs = ending.error?.code === "OutOfMemory" ? this.logs.filter((entry) => !this.rawStderr.has(entry)) : this.logs;
    const outcome: CallOutcome = { ok: ending.ok, db: ending.db, emits: this.emits, logs };
    if ("value" in ending) outcome.value = ending.value;
    if (ending.error) outcome.error = ending.error;
    if (ending.step) outcome.step = ending.step;
    if (ending.ms !== undefined) outcome.ms = ending.ms;
    if (this.chain.length > 0) outcome.chain = this.chain;
    return outcome;
  }
}
