/**
 * A `steps` call: consecutive steps of one workflow run in one call. Each
 * step's props are evaluated here, against what the earlier steps returned
 * and exported (the host evaluated nothing: it cannot know those values
 * without a round trip per step). Each step is reported the moment it ends
 * (`step-done`); the chain stops at the first step that fails or exits.
 */
import { evaluateStepProps } from "../../domain/expressions.js";
import { checkEvaluatedProps } from "../../domain/step-prop-checks.js";
import { stepResults } from "../../domain/workflows.js";
import type { ChainStep, StepContext } from "../protocol.js";
import type { SandboxError } from "../sandbox-error.js";
import type { ActiveCall } from "./active-call.js";
import type { Component } from "./component.js";
import { DbStore } from "./db-store.js";
import { buildInstance } from "./instance.js";
import { StepRecorder } from "./step-recorder.js";
import { nextTurn } from "./turn.js";
import { runStep } from "./step.js";

export interface StepsCall {
  steps: ChainStep[];
  scope: Record<string, unknown>;
  context: StepContext;
  /** The platform answers the run's HTTP caller: a $.respond() is ignored with a log line. */
  platformAnswers?: boolean | undefined;
  /** The environment variables these steps' props name; read by `{{process.env.NAME}}` only, never put in `process.env`. */
  env?: Record<string, string> | undefined;
  /** The run's resume and cancel URLs (`$.flow.delay` / `$.flow.rerun` return them). */
  flowUrls?: { resume_url: string; cancel_url: string } | undefined;
}

export interface ChainDependencies {
  /** The component of a step of the workflow bundle, or why it did not load. */
  load(index: number): { component: Component } | { error: SandboxError };
  describe(thrown: unknown): SandboxError;
}

/**
 * The step's props, evaluated and checked against their props; an expression
 * that cannot be read, names an unknown variable or gives a value that does
 * not fit fails the step as a ConfigurationError naming the prop.
 */
function evaluateProps(step: ChainStep, scope: Record<string, unknown>, env: Record<string, string> | undefined): Record<string, unknown> | SandboxError {
  try {
    return checkEvaluatedProps(step, step.props, evaluateStepProps(step.props, scope, step, env), step.checks);
  } catch (thrown) {
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    return { code: "ConfigurationError", name: "ConfigurationError", message };
  }
}

function asJson(value: unknown): { json: unknown } | { error: SandboxError } {
  try {
    // JSON semantics on purpose: what a step returns is stored and shown as JSON.
    return { json: value === undefined ? null : JSON.parse(JSON.stringify(value) ?? "null") };
  } catch (thrown) {
    const reason = thrown instanceof Error ? thrown.message : String(thrown);
    return { error: { code: "UserError", name: "TypeError", message: `The value the step returned is not JSON-serializable: ${reason}` } };
  }
}

/** The step was given up: its run was cancelled while it ran. */
class StepCancelled extends Error {
  override readonly name = "Cancelled";
  constructor() {
    super("The run was cancelled while this step ran; the step was given up.");
  }
}

function resumedByFlow(run: StepContext["run"]): boolean {
  return "context" in run || "callback_request" in run;
}

export async function runChain(call: ActiveCall, chain: StepsCall, deps: ChainDependencies): Promise<void> {
  const scope: Record<string, unknown> = { ...chain.scope };
  for (const [position, step] of chain.steps.entries()) {
    const started = performance.now();
    const recorder = new StepRecorder();
    let value: unknown;
    let error: SandboxError | undefined;
    const target = deps.load(step.index);
    const props = "error" in target ? target.error : evaluateProps(step, scope, chain.env);
    // Each step has a store of its own (kept by the host per workflow step), not the call's.
    const db = step.dbProps && step.dbProps.length > 0 ? new DbStore(step.db ?? {}) : undefined;
    if ("code" in props) error = props as SandboxError;
    else if ("component" in target) {
      try {
        const instance = buildInstance(target.component, {
          props: props as Record<string, unknown>,
          dbProps: db ? step.dbProps! : [],
          db: db ?? call.db,
          emit: () => {
            throw new Error("this.$emit() is for sources; a step sends events with $.send.emit({ raw_event }).");
          },
          respond: (response, what, options) => call.respond(response, what, options),
          storeRequest: (store, request) => call.storeRequest(store, request),
          authRequest: (account, stale) => call.authRequest(account, stale),
        });
        // A rerun's `runs` and `context` (or a resume URL's request) are the call's first step's, where the run resumed.
        const context = position === 0 || !resumedByFlow(chain.context.run) ? { ...chain.context, stepId: step.id } : { ...chain.context, stepId: step.id, run: { runs: 1 } };
        const running = runStep(target.component, instance, { steps: scope, context }, { recorder, flowUrls: chain.flowUrls, respond: (response, what) => call.respond(response, what, { platformAnswers: chain.platformAnswers === true }) });
        // Given up, its later failure must not surface as a fault of the runner.
        running.catch(() => undefined);
        // A cancel gives the step up where it waits (its run is recorded cancelled now); what it does after is dropped.
        value = await Promise.race([running, call.whenStopped().then(() => Promise.reject(new StepCancelled()))]);
        // One turn of the event loop, so that a promise the step left rejected fails this step.
        await nextTurn();
      } catch (thrown) {
        await nextTurn();
        error = deps.describe(thrown);
      }
    }
    recorder.close();
    const outcome = recorder.outcome();
    const json = error ? { json: null } : asJson(value);
    if ("error" in json) error = json.error;
    const returned = "json" in json ? json.json : null;
    const ends = error !== undefined || outcome.exit !== null || outcome.flow !== undefined || call.ended || position === chain.steps.length - 1;
    // The chain's last report goes with the call's ending, which the runner sends as soon as this returns.
    // A failed step's writes are kept, as a failed source call's are.
    const changes = db?.keyChanges();
    call.stepDone({ index: step.index, value: returned, step: outcome, logsEnd: call.logCount, durationMs: performance.now() - started, ...(error ? { error } : {}), ...(changes ? { db: changes } : {}) }, ends);
    if (ends) return;
    // The report is written (with those of the other runs that got here this turn) before the next step's code runs.
    await call.reported();
    // Its run was cancelled while this step ran: the next one does not start (the host records the run cancelled).
    if (call.chainStopped) return;
    scope[step.name] = stepResults({ exports: outcome.exports, returnValue: returned, summary: outcome.summary });
  }
}
