/**
 * A step call: a workflow code step or a published action, run as
 * `run.call(this, { steps, $ })`. `$` records into the call's StepRecorder;
 * nothing of it reaches the network from here (the host carries out sends
 * after the run).
 *
 * `$.flow.exit(reason)` ends the step where it is called, returned or not: it
 * records the exit and throws a private marker that runStep catches. Code
 * that catches the marker itself (a broad try/catch) swallows the throw, not
 * the exit: the step then goes on, and when it returns, the exit is reported
 * with that return value; when it throws, the error is the step's and the
 * recorded exit travels with it (the host decides).
 */
import type { StepContext } from "../protocol.js";
import { InvalidComponentError, type Component } from "./component.js";
import type { Instance } from "./instance.js";
import type { StepRecorder } from "./step-recorder.js";
import { STEP_SEND_TYPES } from "./step-sends.js";
import { DEFAULT_MAX_RERUNS, DEFAULT_SUSPEND_TIMEOUT_MS } from "../../domain/run-flow.js";

/** Thrown by `$.flow.exit()`; an Error so that a step that catches and prints it shows something readable. */
class FlowExit extends Error {
  override readonly name = "FlowExit";
  constructor() {
    super("$.flow.exit() ends the workflow run here; this is not an error (rethrow it when you catch it).");
  }
}

export interface StepCall {
  steps: Record<string, unknown>;
  context: StepContext;
}

export interface StepEnvironment {
  recorder: StepRecorder;
  /** The run's resume and cancel URLs, what `$.flow.delay` / `$.flow.rerun` return; absent where a run cannot wait (a lone step call). */
  flowUrls?: { resume_url: string; cancel_url: string } | undefined;
  /** The call's respond: sent to the host at once, one per call. */
  respond(response: unknown, what: string): void;
}

function notSupported(name: string): () => never {
  return () => {
    throw new Error(`$.flow.${name}() is not supported by this server yet: a step cannot pause or rerun its workflow run.`);
  };
}

function buildHelpers(call: StepCall, env: StepEnvironment): Record<string, unknown> {
  const { recorder } = env;
  const send: Record<string, (payload: unknown) => void> = {};
  for (const type of STEP_SEND_TYPES) send[type] = (payload: unknown) => recorder.send(type, payload);
  return {
    export: (name: unknown, value: unknown): void => recorder.export(name, value),
    respond: (response: unknown): void => {
      // Every response goes to the host at once, so `immediate` changes nothing here; only its type is checked.
      const immediate = typeof response === "object" && response !== null ? (response as { immediate?: unknown }).immediate : undefined;
      if (immediate !== undefined && typeof immediate !== "boolean") throw new TypeError(`$.respond(): immediate must be a boolean, got ${typeof immediate}.`);
      env.respond(response, "$.respond()");
    },
    flow: {
      exit: (reason?: unknown): never => {
        recorder.exit(reason);
        throw new FlowExit();
      },
      // As on the hosted service, the step goes on after these: the run waits when the step ends.
      delay: env.flowUrls ? (ms: unknown) => recorder.flow({ kind: "delay", ms: ms as number }, env.flowUrls!) : notSupported("delay"),
      rerun: env.flowUrls
        ? (ms: unknown, context: unknown = null, maxReruns: unknown = DEFAULT_MAX_RERUNS) => recorder.flow({ kind: "rerun", ms: ms as number, context, maxReruns: maxReruns as number }, env.flowUrls!)
        : notSupported("rerun"),
      suspend: env.flowUrls ? (timeoutMs: unknown = DEFAULT_SUSPEND_TIMEOUT_MS) => recorder.flow({ kind: "suspend", ms: timeoutMs as number }, env.flowUrls!) : notSupported("suspend"),
    },
    send,
    context: call.context,
  };
}

/** The step's return value; an exit that ended the step returns nothing. */
export async function runStep(component: Component, instance: Instance, call: StepCall, env: StepEnvironment): Promise<unknown> {
  if (!component.run) throw new InvalidComponentError("The component has no run method.");
  try {
    return await component.run.call(instance, { steps: call.steps, $: buildHelpers(call, env) });
  } catch (thrown) {
    if (thrown instanceof FlowExit) return undefined;
    throw thrown;
  }
}
