/**
 * The runner's side of one call: it streams logs, emits and the HTTP
 * response to the host as they happen, keeps the db (and a step's record),
 * and ends the call once (with a result or an error); whatever user code
 * does after that is dropped.
 */
import type { CallMessage, DataStoreAnswer, DataStoreRequest, DbSnapshot, EmitMeta, LogStream, RunnerMessage, StepDone, StepOutcome, WireResponse } from "../protocol.js";
import type { SandboxError } from "../sandbox-error.js";
import { DbStore } from "./db-store.js";
import { toJsonText } from "./json-check.js";
import { toHttpResponse } from "./respond.js";
import type { StepRecorder } from "./step-recorder.js";

/** Events a call may emit, as JSON text: they stream to the host, whose memory this protects. */
export const MAX_EMIT_BYTES = 32 * 1024 * 1024;

/**
 * Logs and emits wait in the runner until the call ends, this many bytes
 * gather, or this long passes: a short call then costs one message, and
 * a long one still streams its logs. A response waits two turns of the
 * event loop at most (see respond).
 */
const FLUSH_BYTES = 64 * 1024;
const FLUSH_MS = 50;

export interface ActiveCallOptions {
  id: number;
  db: DbSnapshot;
  maxLogBytes: number;
  maxLogEntries: number;
  /** Set for a step call: what its `$` records, sent with the result or the error. */
  step?: StepRecorder | undefined;
  /** Writes a message now (channel.ts): for an ending that retires the runner, which may be gone a moment later. */
  send(message: RunnerMessage<WireResponse>): void;
  /** Writes a message at the end of this microtask checkpoint, with the other calls' (channel.ts). */
  post(message: RunnerMessage<WireResponse>): void;
  /** Written with the channel's next write: a step's report, which only has to survive the runner (channel.ts). */
  keep(message: RunnerMessage<WireResponse>): void;
  /** Resolves once what was kept or posted would reach the host were the runner to die now (channel.ts). */
  secured(): Promise<void>;
  /**
   * Set when the call's ending may wait for the calls behind it: it gets the
   * ended call instead of a flush. `now`: send it with what is held at once
   * (the runner is about to be replaced).
   */
  hold?: ((call: ActiveCall, now: boolean) => void) | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readMeta(meta: unknown): EmitMeta {
  if (meta === undefined || meta === null) return {};
  if (!isRecord(meta)) throw new TypeError("this.$emit(event, meta): meta must be an object { id, name, summary, ts }.");
  const result: EmitMeta = {};
  const { id, name, summary, ts } = meta;
  if (id !== undefined && id !== null) {
    if (typeof id !== "string" && !(typeof id === "number" && Number.isFinite(id))) throw new TypeError(`this.$emit(): meta.id must be a string or a number, got ${typeof id}.`);
    result.id = id;
  }
  if (name !== undefined && name !== null) {
    if (typeof name !== "string") throw new TypeError(`this.$emit(): meta.name must be a string, got ${typeof name}.`);
    result.name = name;
  }
  if (summary !== undefined && summary !== null) {
    if (typeof summary !== "string") throw new TypeError(`this.$emit(): meta.summary must be a string, got ${typeof summary}.`);
    result.summary = summary;
  }
  if (ts !== undefined && ts !== null) {
    const millis = typeof ts === "string" && ts.trim() !== "" ? Number(ts) : ts;
    if (typeof millis !== "number" || !Number.isFinite(millis)) throw new TypeError(`this.$emit(): meta.ts must be epoch milliseconds (a number), got ${JSON.stringify(ts) ?? typeof ts}.`);
    result.ts = millis;
  }
  return result;
}

export interface RespondOptions {
  /** The HTTP prop has no customResponse: the platform answers, so this respond() cannot. */
  platformAnswers?: boolean;
}

export class ActiveCall {
  readonly id: number;
  readonly db: DbStore;
  readonly step: StepRecorder | undefined;
  private readonly options: ActiveCallOptions;
  private finished = false;
  private logBytes = 0;
  private logEntries = 0;
  private emitBytes = 0;
  private responded = false;
  private pending: Array<CallMessage<WireResponse>> = [];
  private pendingBytes = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  /** A flush at the end of this turn (a response waits for nothing longer). */
  private flushSoon: NodeJS.Immediate | undefined;
  private readonly startedAt = performance.now();
  private nextStoreRequest = 1;
  /** Data store requests sent and not answered yet. */
  private readonly storeRequests = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();

  constructor(options: ActiveCallOptions) {
    this.options = options;
    this.id = options.id;
    this.db = new DbStore(options.db);
    this.step = options.step;
  }

  get ended(): boolean {
    return this.finished;
  }

  /** The host cancelled this call's run (a `steps` call): no further step starts, and the step in progress is given up. */
  chainStopped = false;
  private readonly stopListeners: Array<() => void> = [];

  stopChain(): void {
    if (this.chainStopped) return;
    this.chainStopped = true;
    for (const listener of this.stopListeners.splice(0)) listener();
  }

  /** Resolves when the host cancels this call's run. */
  whenStopped(): Promise<void> {
    if (this.chainStopped) return Promise.resolve();
    return new Promise((resolve) => this.stopListeners.push(resolve));
  }

  /** Log lines printed so far in this call (a `steps` call marks where each step's lines end). */
  get logCount(): number {
    return this.logEntries;
  }

  /**
   * A step of a `steps` call ended: posted with the logs before it; the chain
   * awaits `reported()` before the next step runs, so a later step's crash
   * cannot lose it. `last`: no step follows, and the call's ending comes
   * next; it travels with that.
   */
  stepDone(done: StepDone, last = false): void {
    if (this.finished) return;
    // Kept for the channel's next write (journaled before the next step) unless the ending follows; then no timer is armed for it either.
    this.queue({ type: "step-done", id: this.id, done }, 0, !last);
    if (!last) this.flush("keep");
  }

  /** Resolves once what the call reported would reach the host were the runner to die now. */
  reported(): Promise<void> {
    return this.options.secured();
  }

  log(stream: LogStream, text: string): void {
    if (this.finished) return;
    // A printed line costs its bytes and its newline.
    this.logBytes += Buffer.byteLength(text) + 1;
    this.logEntries += 1;
    if (this.logBytes > this.options.maxLogBytes || this.logEntries > this.options.maxLogEntries) {
      this.fail(
        {
          code: "OutputFlood",
          name: "OutputFlood",
          message: `The component printed more than its log limit (${this.options.maxLogBytes} bytes or ${this.options.maxLogEntries} lines); the call was stopped.`,
        },
        true,
      );
      return;
    }
    this.queue({ type: "log", id: this.id, stream, text, ts: Date.now() }, Buffer.byteLength(text));
  }

  emit(event: unknown, meta: unknown): void {
    this.assertOpen("this.$emit()");
    const checkedMeta = readMeta(meta);
    const text = event === undefined ? undefined : toJsonText(event, "this.$emit(): the event");
    this.emitBytes += text === undefined ? 0 : Buffer.byteLength(text);
    if (this.emitBytes > MAX_EMIT_BYTES) throw new RangeError(`this.$emit(): this call emitted more than ${MAX_EMIT_BYTES} bytes of events.`);
    this.queue({ type: "emit", id: this.id, event: text === undefined ? undefined : JSON.parse(text), meta: checkedMeta }, text?.length ?? 0);
  }

  /**
   * `what` names the function user code called: respond() of an HTTP prop, or
   * a step's $.respond(). A respond() that can no longer answer (one already
   * did; or `platformAnswers`: the HTTP prop lacks customResponse, or the
   * workflow's respond is not "workflow", so the platform answers the caller) is ignored with a line in the logs, as the
   * hosted service does: existing components call it twice on some paths.
   */
  respond(input: unknown, what = "respond()", options: RespondOptions = {}): void {
    this.assertOpen(what);
    if (options.platformAnswers) {
      const why =
        what === "$.respond()"
          ? 'this workflow does not answer HTTP callers itself (its respond is "immediately", so the platform answers them). Set respond: "workflow" on an HTTP-triggered workflow to answer with $.respond().'
          : "this source's $.interface.http prop does not set customResponse: true, so the platform answers its HTTP requests. Add customResponse: true to answer with respond().";
      this.log("stderr", `${what} was ignored: ${why}`);
      return;
    }
    if (this.responded) {
      this.log("stderr", `${what} was ignored: an earlier call already answered this HTTP request, and a request gets one response. The run goes on.`);
      return;
    }
    const response = toHttpResponse(input, what);
    this.responded = true;
    const body = response.body instanceof Uint8Array ? { base64: Buffer.from(response.body).toString("base64") } : response.body;
    this.queue({ type: "respond", id: this.id, response: { ...response, body } }, 0);
    // Sent two turns of the event loop later: a call that ends by then (a run's last step answering;
    // a step ends a turn after it returns, see step-chain's nextTurn) carries the answer with its
    // ending, and the host records the run before it answers; one that goes on working sends the
    // answer alone, those two turns later.
    this.flushSoon ??= setImmediate(() => {
      this.flushSoon = setImmediate(() => {
        this.flushSoon = undefined;
        // Ended meanwhile: the answer is among the ending's messages, which the lane sends.
        if (!this.finished) this.flush();
      });
    });
  }

  /** Sends a data store request to the host now (it waits on the answer), and resolves with the answer's value. */
  storeRequest(store: string, request: DataStoreRequest): Promise<unknown> {
    this.assertOpen(`A data store's ${request.op}()`);
    const req = this.nextStoreRequest++;
    const answered = new Promise<unknown>((resolve, reject) => this.storeRequests.set(req, { resolve, reject }));
    this.queue({ type: "store", id: this.id, req, store, request }, 0);
    this.flush();
    return answered;
  }

  /** Asks the host for the account's fields after a refresh (`$auth.refresh()`); answered like a data store request. */
  authRequest(account: string, stale: string | null): Promise<unknown> {
    this.assertOpen("$auth.refresh()");
    const req = this.nextStoreRequest++;
    const answered = new Promise<unknown>((resolve, reject) => this.storeRequests.set(req, { resolve, reject }));
    this.queue({ type: "auth", id: this.id, req, account, stale }, 0);
    this.flush();
    return answered;
  }

  /** The host answered a data store request; an answer to none (or after the call ended) is dropped. */
  storeReply(req: number, answer: DataStoreAnswer): void {
    const waiting = this.storeRequests.get(req);
    if (!waiting || this.finished) return;
    this.storeRequests.delete(req);
    if (answer.ok) return waiting.resolve(answer.value);
    const error = new Error(answer.error.message);
    error.name = answer.error.name;
    waiting.reject(error);
  }

  succeed(value: unknown): void {
    if (this.finished) return;
    let json: unknown;
    try {
      // JSON semantics on purpose: what a call returns is stored and shown as JSON.
      json = value === undefined ? undefined : JSON.parse(JSON.stringify(value) ?? "null");
    } catch (thrown) {
      const reason = thrown instanceof Error ? thrown.message : String(thrown);
      this.fail({ code: "UserError", name: "TypeError", message: `The value the component returned is not JSON-serializable: ${reason}` }, false);
      return;
    }
    this.finished = true;
    this.queue({ type: "result", id: this.id, value: json, db: this.db.changes(), retire: false, ...this.closeStep(), ms: this.elapsedMs() }, 0, true);
    this.end(false);
  }

  fail(error: SandboxError, retire: boolean): void {
    if (this.finished) return;
    this.finished = true;
    // A failed step still reports what it exported (and sent, and whether it exited) before the failure.
    this.queue({ type: "error", id: this.id, error, db: this.db.changes(), retire, ...this.closeStep(), ms: this.elapsedMs() }, 0, true);
    this.end(retire);
  }

  /** What waits to be sent (the ending last), taken by the runner to send with other held endings. */
  takePending(): Array<CallMessage<WireResponse>> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    clearImmediate(this.flushSoon);
    this.flushSoon = undefined;
    const messages = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    return messages;
  }

  /** A retiring ending never waits: the runner is about to go, and what it holds must reach the host first. */
  private end(retire: boolean): void {
    if (!this.options.hold) return this.flush(retire ? "now" : "post");
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.options.hold(this, retire);
  }

  private elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  private closeStep(): { step?: StepOutcome } {
    if (!this.step) return {};
    this.step.close();
    return { step: this.step.outcome() };
  }

  /** `sentNow`: the caller sends (or hands over) what waits right after, so no timer is armed for it. */
  private queue(message: CallMessage<WireResponse>, bytes: number, sentNow = false): void {
    this.pending.push(message);
    this.pendingBytes += bytes;
    if (sentNow) return;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Posts what waits, in order, as one message; "now": sends it at once; "keep": keeps it for the channel's next write. */
  private flush(how: "post" | "now" | "keep" = "post"): void {
    const messages = this.takePending();
    if (messages.length === 0) return;
    const message: RunnerMessage<WireResponse> = messages.length === 1 ? messages[0]! : { type: "batch", messages };
    if (how === "now") this.options.send(message);
    else if (how === "keep") this.options.keep(message);
    else this.options.post(message);
  }

  private assertOpen(what: string): void {
    if (this.finished) throw new Error(`${what} was called after the invocation ended; await your work inside run.`);
  }
}
