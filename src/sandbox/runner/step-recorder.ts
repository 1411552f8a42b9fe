/**
 * What a step call records through `$` (exports, summary, exit, sends), kept
 * apart from the call's value so that a step that fails still reports what it
 * exported before the failure. The call closes it when it ends; `$` used
 * after that (from a timer left running) throws.
 */
import type { StepOutcome, StepSend, StepSendType } from "../protocol.js";
import { toJsonText } from "./json-check.js";
import { checkSend } from "./step-sends.js";
import { delayProblem, maxRerunsProblem, type FlowRequest } from "../../domain/run-flow.js";

/** Exports and sends of one step, as JSON text: they travel with the result, whose size this bounds. */
export const MAX_STEP_BYTES = 32 * 1024 * 1024;

/** Names a step cannot export: `steps.<step>.$return_value` is the return value's place. */
const RESERVED_EXPORTS = new Set(["$return_value"]);

export class StepRecorder {
  private readonly exports = new Map<string, unknown>();
  private summary: string | null = null;
  private exitReason: { reason: string | null } | null = null;
  private readonly sends: StepSend[] = [];
  private flowRequest: FlowRequest | null = null;
  private bytes = 0;
  private closed = false;

  get exited(): boolean {
    return this.exitReason !== null;
  }

  export(name: unknown, value: unknown): void {
    this.assertOpen("$.export()");
    if (typeof name !== "string" || name === "") throw new TypeError(`$.export(name, value): name must be a non-empty string, got ${name === "" ? "an empty string" : typeof name}.`);
    if (RESERVED_EXPORTS.has(name)) throw new TypeError(`$.export(): "${name}" is reserved for the step's return value; return it instead.`);
    if (name === "$summary") {
      if (typeof value !== "string") throw new TypeError(`$.export("$summary", text): the summary must be a string, got ${value === null ? "null" : typeof value}.`);
      this.summary = value;
      return;
    }
    // As a field of the exports object: JSON leaves an undefined one out, and so does this.
    if (value === undefined) {
      this.exports.delete(name);
      return;
    }
    const text = toJsonText(value, `$.export("${name}"): the value`);
    this.count(text, `$.export("${name}")`);
    this.exports.set(name, JSON.parse(text));
  }

  /** The first reason stays: the run ended there, and code after it ran only because the step caught the exit. */
  exit(reason: unknown): void {
    this.assertOpen("$.flow.exit()");
    if (reason !== undefined && reason !== null && typeof reason !== "string") throw new TypeError(`$.flow.exit(reason): reason must be a string, got ${typeof reason}.`);
    this.exitReason ??= { reason: typeof reason === "string" ? reason : null };
  }

  /**
   * `$.flow.delay` / `$.flow.rerun`: the run waits once the step ends; the last
   * call counts. A bad value throws here, failing the step with its name.
   */
  flow(request: FlowRequest, urls: { resume_url: string; cancel_url: string }): { resume_url: string; cancel_url: string } {
    const what = request.kind === "delay" ? "$.flow.delay(ms)" : request.kind === "suspend" ? "$.flow.suspend(timeoutMs)" : "$.flow.rerun(delayMs, context, maxReruns)";
    this.assertOpen(what);
    const problem = delayProblem(request.ms, what) ?? (request.kind === "rerun" ? maxRerunsProblem(request.maxReruns) : null);
    if (problem) throw new RangeError(problem);
    if (request.kind === "rerun") {
      const text = toJsonText(request.context ?? null, "$.flow.rerun(): the context");
      this.count(text, "$.flow.rerun()");
      request = { ...request, context: JSON.parse(text) };
    }
    this.flowRequest = request;
    return { ...urls };
  }

  send(type: StepSendType, payload: unknown): void {
    this.assertOpen(`$.send.${type}()`);
    const checked = checkSend(type, payload);
    this.count(JSON.stringify(checked), `$.send.${type}()`);
    this.sends.push({ type, payload: checked });
  }

  close(): void {
    this.closed = true;
  }

  outcome(): StepOutcome {
    return { exports: Object.fromEntries(this.exports), summary: this.summary, exit: this.exitReason, sends: [...this.sends], ...(this.flowRequest ? { flow: this.flowRequest } : {}) };
  }

  private count(text: string, what: string): void {
    this.bytes += Buffer.byteLength(text);
    if (this.bytes > MAX_STEP_BYTES) throw new RangeError(`${what}: this step exported and sent more than ${MAX_STEP_BYTES} bytes of JSON.`);
  }

  private assertOpen(what: string): void {
    if (this.closed) throw new Error(`${what} was called after the step ended; await your work inside run.`);
  }
}
