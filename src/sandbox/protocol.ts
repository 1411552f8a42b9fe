/**
 * The messages between the host and a runner, as JSON frames on the runner's
 * descriptor 3 (runner/frames.ts; JSON is about twice as fast as structured
 * clone for these small messages, and a binary response body travels as
 * base64, see WireResponse).
 *
 * The runner runs untrusted code, which can post messages of its own, so the
 * host reads every runner message through `readRunnerMessage` and trusts
 * nothing about it beyond the shape checked there. A runner serves one owner
 * (the calls of many of its bundles), so a forged message can only mislead
 * that owner's own calls.
 *
 * Runner files import this file for types only: at run time the runner
 * folder must not need anything outside itself (see runner-entry.ts).
 */
import type { StepPropCheck } from "../domain/step-prop-checks.js";
import type { HttpResponse } from "./http-response.js";
import type { SandboxError } from "./sandbox-error.js";
import type { FlowRequest } from "../domain/run-flow.js";
import { copyOwn } from "../domain/own-copy.js";

/** What the host asks a component to do. */
export type ComponentCall =
  /**
   * `httpBody`: the event is an HTTP request that carries `bodyRaw` only; the
   * runner adds `body`, parsed by its content type (runner/http-body.ts), so
   * the host neither parses the body nor sends it twice.
   */
  | { kind: "run"; event?: unknown; httpBody?: boolean }
  | { kind: "hook"; hook: "deploy" | "activate" | "deactivate" }
  | { kind: "options"; prop: string; args: Record<string, unknown> }
  | { kind: "method"; method: string; args: unknown[] }
  /** A workflow code step or a published action: `run({ steps, $ })`; the result carries a StepOutcome. */
  | { kind: "step"; steps: Record<string, unknown>; context: StepContext }
  /**
   * Consecutive steps of one workflow run, in one call: the runner evaluates
   * each step's props against `scope` (`steps`), runs it, reports it at once
   * (`step-done`), adds its results to the scope, and goes on until a step
   * fails or exits. One round trip per run instead of one per step.
   */
  | {
      kind: "steps";
      steps: ChainStep[];
      scope: Record<string, unknown>;
      context: StepContext;
      /** The workflow does not answer its HTTP caller itself (`respond: "immediately"`): a `$.respond()` is ignored with a log line. */
      platformAnswers?: boolean;
      /** The owner's environment variables that these steps' props name (`{{process.env.NAME}}`), and only those. */
      env?: Record<string, string>;
      /** What `$.flow.delay` / `$.flow.rerun` return: the run's resume and cancel URLs. */
      flowUrls?: { resume_url: string; cancel_url: string };
    };

/** A step of a `steps` call: which step of the workflow bundle, and its props as configured (expressions unevaluated). */
export interface ChainStep {
  index: number;
  id: string;
  name: string;
  props: Record<string, unknown>;
  /** How errors name the step's props: `steps[2]`. */
  field: string;
  /** The step's `$.service.db` props, all over the step's own store `db`. */
  dbProps?: string[] | undefined;
  /** The step's store when the run started. */
  db?: DbSnapshot | undefined;
  /** What each prop holding an expression must be once evaluated. */
  checks?: Record<string, StepPropCheck>;
}

/** One step of a `steps` call, reported as soon as it ends. */
export interface StepDone {
  index: number;
  /** The return value, as JSON. */
  value: unknown;
  step: StepOutcome;
  /** How many log lines the call had printed when the step ended: the step's own are those since the previous step. */
  logsEnd: number;
  durationMs: number;
  error?: SandboxError;
  /** The keys the step set and removed in its `$.service.db`, when it touched it. */
  db?: StepStoreChanges;
}

/** What a step changed in its `$.service.db`: keys set (with their values) and keys removed. */
export interface StepStoreChanges {
  set: Record<string, unknown>;
  removed: string[];
}

/**
 * A `data_store` call, as a component's store object sends it: `value` is
 * JSON text (checked by the runner, checked again by the host), `ttl` seconds.
 */
export type DataStoreRequest =
  | { op: "get" | "has" | "delete"; key: string }
  | { op: "set"; key: string; value: string; ttl: number | null }
  | { op: "keys" | "entries" | "clear" };

/** The host's answer to a data store call: its value (JSON), or why it failed. */
export type DataStoreAnswer = { ok: true; value?: unknown } | { ok: false; error: { name: string; message: string } };

/**
 * `$.context` of a step, passed through as the host sends it (JSON). The
 * sandbox neither reads nor adjusts it: the call's real time limit is still
 * `limits.timeoutMs`.
 */
export interface StepContext {
  /** When the run must be done, as epoch milliseconds. */
  deadline: number;
  /** `runs`: how many times this run has been executed (1 the first time); `context`: what `$.flow.rerun` passed. */
  run: { runs: number; context?: unknown };
  workflowId: string;
  stepId: string;
  [field: string]: unknown;
}

export type StepSendType = "http" | "email" | "s3" | "emit" | "sse";

/** A `$.send.*` call, checked and recorded in the runner; the host carries it out after the run. */
export interface StepSend {
  type: StepSendType;
  payload: unknown;
}

/** What a step recorded through `$`, beside its return value. */
export interface StepOutcome {
  /** `$.export(name, value)`, as JSON; `$summary` is not among them. */
  exports: Record<string, unknown>;
  /** `$.export("$summary", text)`. */
  summary: string | null;
  /** `$.flow.exit(reason)` was called: the workflow run ends after this step, successfully. */
  exit: { reason: string | null } | null;
  /** In call order. */
  sends: StepSend[];
  /** `$.flow.delay` / `$.flow.rerun` was called: the run waits when this step ends (absent: neither was). */
  flow?: FlowRequest | null;
}

/** `inspect` answers with the ComponentManifest as the result's value. */
export type RunnerCall = ComponentCall | { kind: "inspect" };

export interface EmitMeta {
  id?: string | number;
  name?: string;
  summary?: string;
  ts?: number;
}

export type LogStream = "stdout" | "stderr";

export type DbSnapshot = Record<string, unknown>;

/** An HttpResponse as it crosses the channel: a binary body as `{ base64 }`. */
export type WireResponse = Omit<HttpResponse, "body"> & { body: string | { base64: string } | null };

/** Host → runner. */
export type HostMessage =
  | {
      type: "invoke";
      id: number;
      /**
       * The bundle file (in the runner's own folder) whose code the call runs.
       * The runner requires it on its first call, so load-time logs and
       * errors belong to that call, and keeps it loaded for the next.
       */
      bundle: string;
      /** The batch the call belongs to: calls of one lane run one after the other; lanes run side by side. */
      lane?: number;
      call: RunnerCall;
      props: Record<string, unknown>;
      dbProps: string[];
      db: DbSnapshot;
      /** Start from the store the runner's previous call left, not from `db` (calls sent together). */
      carryDb?: boolean;
      /**
       * Run at once, beside the other calls in flight, rather than after them:
       * independent calls (workflow runs) whose steps wait on I/O. Never with carryDb.
       */
      concurrent?: boolean;
      /**
       * The call's ending may wait in the runner for the calls queued behind it
       * (see Runner.hold): a batch then answers in one message. A runner that
       * dies with endings held loses them, so the host runs those calls again
       * (see Sandbox.invokeBatch). Never with concurrent.
       */
      holdEnd?: boolean;
      maxLogBytes: number;
      maxLogEntries: number;
    }
  /** The run of this `steps` call was cancelled: no step of it starts after the one in progress. */
  | { type: "stop-chain"; id: number }
  /** The answer to the call's data store request `req`. */
  | ({ type: "store-reply"; id: number; req: number } & DataStoreAnswer)
  /**
   * Several invokes in one message (a batch), run in order. Props and db
   * props are the same for every call of a batch, so they travel once, in
   * `shared`, and an invoke leaves them out. So do the steps of a batch of
   * `steps` calls (the runs of one workflow): in `shared.steps`, the calls
   * without `steps`; they were a third of each run's bytes.
   */
  | {
      type: "invoke-many";
      shared: { props: Record<string, unknown>; dbProps: string[]; bundle: string; lane: number; steps?: ChainStep[] };
      invokes: Array<Omit<InvokeMessage, "props" | "dbProps" | "bundle" | "lane" | "call"> & Partial<Pick<InvokeMessage, "props" | "dbProps">> & { call: RunnerCall | StepsCallWithoutSteps }>;
    };

type InvokeMessage = Extract<HostMessage, { type: "invoke" }>;

/** A `steps` call of an invoke-many whose steps are the batch's `shared.steps`. */
export type StepsCallWithoutSteps = Omit<Extract<ComponentCall, { kind: "steps" }>, "steps"> & { steps?: undefined };

/**
 * Runner → host. Messages of a call carry its id. A call ends with `result` or
 * `error`; `retire` asks the host to replace the runner (its state is
 * suspect: work of the call may still be running, or it is about to exit).
 * An `error` with id null reports a fault no call owns: between calls (left
 * by a call that ended, of `bundle` when the runner could tell), or, with
 * `inFlight`, while calls were in progress whose code it was cannot be told.
 */
/** As the host reads them: `R` is HttpResponse; as the runner sends them, WireResponse. */
export type RunnerMessage<R = HttpResponse> = CallMessage<R> | { type: "batch"; messages: Array<CallMessage<R>> } | RunnerReady;

/**
 * Sent once, when the runner has set itself up and before any user code runs:
 * the host starts the calls' time limits from here, so a slow start (a loaded
 * machine) is not charged to the component.
 */
export interface RunnerReady {
  type: "ready";
}

/**
 * One message of a call. The runner sends them in batches (see ActiveCall):
 * one frame per call in the common case, rather than one per line and event.
 */
export type CallMessage<R = HttpResponse> =
  | { type: "log"; id: number; stream: LogStream; text: string; ts: number }
  | { type: "emit"; id: number; event: unknown; meta: EmitMeta }
  | { type: "respond"; id: number; response: R }
  /** A step of a `steps` call ended; sent at once, so that what a later step's crash loses is only that step. */
  | { type: "step-done"; id: number; done: StepDone }
  /** A call to the data store `store` (a `data_store` prop's); the host answers with a store-reply of the same `req`. */
  | { type: "store"; id: number; req: number; store: string; request: DataStoreRequest }
  /**
   * `this.<app>.$auth.refresh()`: the provider refused the account's token (a 401); the host
   * refreshes it (once, however many calls ask) unless it changed since `stale`, and answers
   * the account's fields with a store-reply of the same `req`.
   */
  | { type: "auth"; id: number; req: number; account: string; stale: string | null }
  /** `step` only for a step call; also on its error, with what the step recorded before it failed. */
  /** `ms`: how long the call ran, as the runner measured it (its ending may have waited after, see holdEnd). */
  | { type: "result"; id: number; value: unknown; db: DbSnapshot | null; retire: boolean; step?: StepOutcome; ms?: number }
  | { type: "error"; id: number | null; error: SandboxError; db: DbSnapshot | null; retire: boolean; step?: StepOutcome; ms?: number; bundle?: string; inFlight?: boolean };

const SANDBOX_ERROR_CODES = new Set([
  "UserError",
  "NonErrorThrown",
  "Timeout",
  "OutOfMemory",
  "ProcessExit",
  "UnhandledRejection",
  "OutputFlood",
  "RunnerCrashed",
  "InvalidComponent",
  "ConfigurationError",
  "AuthError",
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCallId(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

function readMs(value: unknown): { ms?: number } {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? { ms: value } : {};
}

function readDb(value: unknown): DbSnapshot | null | undefined {
  if (value === null) return null;
  return isRecord(value) ? value : undefined;
}

function readError(value: unknown): SandboxError | undefined {
  if (!isRecord(value) || typeof value.code !== "string" || !SANDBOX_ERROR_CODES.has(value.code)) return undefined;
  if (typeof value.name !== "string" || typeof value.message !== "string") return undefined;
  const error: SandboxError = { code: value.code as SandboxError["code"], name: value.name, message: value.message };
  if (typeof value.stack === "string") error.stack = value.stack;
  if (typeof value.retryable === "boolean") error.retryable = value.retryable;
  return error;
}

function readResponse(value: unknown): HttpResponse | undefined {
  if (!isRecord(value) || !isRecord(value.headers)) return undefined;
  const { status } = value;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599) return undefined;
  const wire = value.body;
  let body: HttpResponse["body"];
  if (wire === null || wire === undefined) body = null;
  else if (typeof wire === "string") body = wire;
  else if (isRecord(wire) && typeof wire.base64 === "string") body = new Uint8Array(Buffer.from(wire.base64, "base64"));
  else return undefined;
  const headers: Record<string, string | string[]> = {};
  for (const [name, header] of Object.entries(value.headers)) {
    if (typeof header === "string") headers[name] = header;
    else if (Array.isArray(header) && header.every((item) => typeof item === "string")) headers[name] = header as string[];
    else return undefined;
  }
  return { status, headers, body };
}

const STEP_SEND_TYPES = new Set<unknown>(["http", "email", "s3", "emit", "sse"] satisfies StepSendType[]);

/**
 * The shape only: the runner checked each payload's fields, but a runner's
 * word is not trusted, so whoever carries out a send checks what it needs.
 */
function readStep(value: unknown): StepOutcome | undefined {
  if (!isRecord(value) || !isRecord(value.exports) || !Array.isArray(value.sends)) return undefined;
  const { summary, exit } = value;
  if (summary !== null && typeof summary !== "string") return undefined;
  if (exit !== null && !(isRecord(exit) && (exit.reason === null || typeof exit.reason === "string"))) return undefined;
  const sends: StepSend[] = [];
  for (const send of value.sends) {
    if (!isRecord(send) || !STEP_SEND_TYPES.has(send.type) || !isRecord(send.payload)) return undefined;
    sends.push({ type: send.type as StepSendType, payload: send.payload });
  }
  const flow = readFlow(value.flow);
  if (flow === undefined) return undefined;
  // copyOwn, not a spread: every step of every run comes through here (see domain/own-copy.ts).
  return { exports: copyOwn(value.exports), summary, exit: exit === null ? null : { reason: exit.reason as string | null }, sends, ...(flow ? { flow } : {}) };
}

/** The shape only (the host checks the values again): null when no flow was asked for, undefined when malformed. */
function readFlow(value: unknown): FlowRequest | null | undefined {
  if (value === undefined || value === null) return null;
  if (!isRecord(value) || typeof value.ms !== "number") return undefined;
  if (value.kind === "delay" || value.kind === "suspend") return { kind: value.kind, ms: value.ms };
  if (value.kind === "rerun" && typeof value.maxReruns === "number") return { kind: "rerun", ms: value.ms, context: value.context ?? null, maxReruns: value.maxReruns };
  return undefined;
}

/** Absent stays absent; present must be well formed, else the whole message is not. */
function readOptionalStep(value: unknown): { step?: StepOutcome } | undefined {
  if (value === undefined) return {};
  const step = readStep(value);
  return step ? { step } : undefined;
}

function readMeta(value: unknown): EmitMeta | undefined {
  if (!isRecord(value)) return undefined;
  const meta: EmitMeta = {};
  if (typeof value.id === "string" || typeof value.id === "number") meta.id = value.id;
  if (typeof value.name === "string") meta.name = value.name;
  if (typeof value.summary === "string") meta.summary = value.summary;
  if (typeof value.ts === "number") meta.ts = value.ts;
  return meta;
}

/** The message, rebuilt from checked fields only; undefined when it is not a well-formed runner message. */
export function readRunnerMessage(raw: unknown): RunnerMessage | undefined {
  if (isRecord(raw) && raw.type === "ready") return { type: "ready" };
  if (isRecord(raw) && raw.type === "batch") {
    if (!Array.isArray(raw.messages)) return undefined;
    const messages: CallMessage[] = [];
    for (const item of raw.messages) {
      const message = readCallMessage(item);
      if (!message) return undefined;
      messages.push(message);
    }
    return { type: "batch", messages };
  }
  return readCallMessage(raw);
}

function readCallMessage(raw: unknown): CallMessage | undefined {
  if (!isRecord(raw)) return undefined;
  switch (raw.type) {
    case "log":
      if (!isCallId(raw.id) || (raw.stream !== "stdout" && raw.stream !== "stderr") || typeof raw.text !== "string" || typeof raw.ts !== "number") return undefined;
      return { type: "log", id: raw.id, stream: raw.stream, text: raw.text, ts: raw.ts };
    case "emit": {
      const meta = readMeta(raw.meta);
      if (!isCallId(raw.id) || !meta) return undefined;
      return { type: "emit", id: raw.id, event: raw.event, meta };
    }
    case "respond": {
      const response = readResponse(raw.response);
      if (!isCallId(raw.id) || !response) return undefined;
      return { type: "respond", id: raw.id, response };
    }
    case "store": {
      const request = readStoreRequest(raw.request);
      if (!isCallId(raw.id) || !isCallId(raw.req) || typeof raw.store !== "string" || !request) return undefined;
      return { type: "store", id: raw.id, req: raw.req, store: raw.store, request };
    }
    case "auth": {
      if (!isCallId(raw.id) || !isCallId(raw.req) || typeof raw.account !== "string" || raw.account.length > 64) return undefined;
      const stale = typeof raw.stale === "string" && raw.stale.length <= 16_384 ? raw.stale : null;
      return { type: "auth", id: raw.id, req: raw.req, account: raw.account, stale };
    }
    case "step-done": {
      const done = readStepDone(raw.done);
      if (!isCallId(raw.id) || !done) return undefined;
      return { type: "step-done", id: raw.id, done };
    }
    case "result": {
      const db = readDb(raw.db);
      const step = readOptionalStep(raw.step);
      if (!isCallId(raw.id) || db === undefined || !step) return undefined;
      return { type: "result", id: raw.id, value: raw.value, db, retire: raw.retire === true, ...step, ...readMs(raw.ms) };
    }
    case "error": {
      const db = readDb(raw.db);
      const error = readError(raw.error);
      const step = readOptionalStep(raw.step);
      if ((raw.id !== null && !isCallId(raw.id)) || db === undefined || !error || !step) return undefined;
      const fault = raw.id === null ? { ...(typeof raw.bundle === "string" ? { bundle: raw.bundle } : {}), ...(raw.inFlight === true ? { inFlight: true } : {}) } : {};
      return { type: "error", id: raw.id, error, db, retire: raw.retire === true, ...step, ...readMs(raw.ms), ...fault };
    }
    default:
      return undefined;
  }
}

/** The shape only: names, keys, values and TTLs are checked by whoever carries the request out. */
function readStoreRequest(value: unknown): DataStoreRequest | undefined {
  if (!isRecord(value)) return undefined;
  switch (value.op) {
    case "get":
    case "has":
    case "delete":
      return typeof value.key === "string" ? { op: value.op, key: value.key } : undefined;
    case "set": {
      const { key, value: json, ttl } = value;
      if (typeof key !== "string" || typeof json !== "string" || (ttl !== null && typeof ttl !== "number")) return undefined;
      return { op: "set", key, value: json, ttl };
    }
    case "keys":
    case "entries":
    case "clear":
      return { op: value.op };
    default:
      return undefined;
  }
}

function readStoreChanges(value: unknown): StepStoreChanges | undefined {
  if (!isRecord(value) || !isRecord(value.set) || !Array.isArray(value.removed)) return undefined;
  if (!value.removed.every((key) => typeof key === "string")) return undefined;
  return { set: { ...value.set }, removed: [...(value.removed as string[])] };
}

function readStepDone(value: unknown): StepDone | undefined {
  if (!isRecord(value)) return undefined;
  const { index, logsEnd, durationMs } = value;
  if (!isCallId(index) || !isCallId(logsEnd) || typeof durationMs !== "number" || !Number.isFinite(durationMs)) return undefined;
  const step = readStep(value.step);
  if (!step) return undefined;
  const done: StepDone = { index, value: value.value, step, logsEnd, durationMs };
  if (value.db !== undefined) {
    const db = readStoreChanges(value.db);
    if (!db) return undefined;
    done.db = db;
  }
  if (value.error !== undefined) {
    const error = readError(value.error);
    if (!error) return undefined;
    done.error = error;
  }
  return done;
}
