import { Type, type Static } from "@sinclair/typebox";
import type { WorkflowRunStats } from "../../domain/activity.js";
import type { StoredEvent, TimerSchedule } from "../../domain/sources.js";
import type { Workflow, WorkflowRun } from "../../domain/workflows.js";
import { maskSealed } from "../../engine/secrets.js";
import { toEpochSeconds } from "./common.js";
import { emitIdOf, showsEvent } from "./sources.js";
import { retryPolicyView } from "../../domain/run-retries.js";
import { gateSettingsView, type GateStats } from "../../domain/run-gate.js";

/** Retries of a failed step, as the API shows them (settings.retries, a step's retries). */
const RetryPolicySchema = Type.Object({ max: Type.Integer(), backoff: Type.String({ description: "fixed or exponential" }), delay_ms: Type.Integer(), max_delay_ms: Type.Integer() });

const Json = Type.Unknown();

const TriggerBodySchema = Type.Object(
  {
    type: Type.Optional(Type.Union([Type.Literal("http"), Type.Literal("timer"), Type.Literal("manual")])),
    intervalSeconds: Type.Optional(Type.Unknown()),
    cron: Type.Optional(Type.Unknown()),
    timezone: Type.Optional(Type.Unknown({ description: "A cron timer's IANA time zone (\"Europe/Paris\"); UTC without one" })),
    source_id: Type.Optional(Type.String()),
    component_code: Type.Optional(Type.String()),
    component_url: Type.Optional(Type.String()),
    key: Type.Optional(Type.String()),
    configured_props: Type.Optional(Type.Record(Type.String(), Json)),
  },
  {
    additionalProperties: false,
    description:
      'One of {"type":"http"}, {"type":"timer","intervalSeconds"|"cron"(,"timezone")}, {"source_id"}, a source component with configured_props, or {"type":"manual"}: no trigger (shown as type "none"), the workflow runs only by POST /v1/workflows/{id}/runs and its subscriptions; leaving trigger out does the same.',
  },
);

/** The hosted API's `triggers` item: Runnel's trigger fields, with `props` for `configured_props`. */
const TriggersItemSchema = Type.Object(
  { ...TriggerBodySchema.properties, props: Type.Optional(Type.Record(Type.String(), Json, { description: "The trigger source's configured props (configured_props)." })) },
  { additionalProperties: false },
);

const StepBodySchema = Type.Object(
  {
    name: Type.Optional(Type.String({ description: "Unique in the workflow; later steps read steps.<name>. Required, as name or namespace." })),
    namespace: Type.Optional(Type.String({ description: "The hosted API's word for name." })),
    code: Type.Optional(Type.String({ description: "A code step: component code whose run({ steps, $ }) runs." })),
    filename: Type.Optional(Type.String({ description: "The file the code came from (.ts, .mjs…)." })),
    key: Type.Optional(Type.String({ description: "A published action, by key." })),
    props: Type.Optional(Type.Record(Type.String(), Json, { description: "Values; strings may hold {{steps.<name>.<path>}} expressions." })),
    retries: Type.Optional(Type.Unknown({ description: "The step's own retries ({max, backoff, delay_ms, max_delay_ms}): they override settings.retries." })),
  },
  { additionalProperties: false },
);

const SettingsBodySchema = Type.Object(
  {
    error_notifications: Type.Optional(Type.Unknown({ description: "false: errors are listed but not sent to the global error workflow." })),
    error_retention: Type.Optional(Type.Unknown({ description: "Errors kept in $errors (default 100)." })),
    retries: Type.Optional(
      Type.Unknown({
        description: 'Retries of a failed step: {"max": 0-100, "backoff": "fixed" | "exponential", "delay_ms", "max_delay_ms"} (delays 0 to 7 days; defaults 3, "exponential", 1000, 3600000). A step\'s own retries override it.',
      }),
    ),
    errors_on_each_attempt: Type.Optional(Type.Unknown({ description: "true: every failed attempt goes to $errors (with attempt and will_retry), not only the final failure." })),
    concurrency: Type.Optional(Type.Unknown({ description: "Runs of the workflow at once, 1 to 1000 (1: one at a time, in the order events arrived); unlimited when left out. Events over it wait their turn, durably." })),
    concurrency_key: Type.Optional(Type.Unknown({ description: 'With concurrency: one {{ }} expression over the trigger event, such as "{{ steps.trigger.event.body.customer_id }}"; the limit holds per value. Events where it does not evaluate share one line.' })),
    rate_limit: Type.Optional(Type.Unknown({ description: 'At most runs runs start per per_seconds: {"runs": 1-1000, "per_seconds": 1-86400}. Events over it wait, never dropped.' })),
    name: Type.Optional(Type.Unknown({ description: "The hosted API's place for the workflow's name (name)." })),
    auto_deploy: Type.Optional(Type.Unknown({ description: "Hosted only: accepted and ignored (named in warnings); Runnel deploys every change at once." })),
  },
  { additionalProperties: false },
);

/** POST and PUT bodies; the domain rules (workflow-rules.ts) check values and name the bad field. */
export const WorkflowBodySchema = Type.Object(
  {
    name: Type.Optional(Type.Unknown()),
    trigger: Type.Optional(TriggerBodySchema),
    steps: Type.Optional(Type.Array(StepBodySchema)),
    respond: Type.Optional(Type.Unknown({ description: '"workflow": an HTTP caller waits for $.respond; "immediately" (default): it gets 200 at once.' })),
    settings: Type.Optional(SettingsBodySchema),
    active: Type.Optional(Type.Unknown()),
    triggers: Type.Optional(Type.Array(TriggersItemSchema, { description: "The hosted API's form of trigger: a list of at most one." })),
    project_id: Type.Optional(Type.String({ description: "Hosted only: accepted and ignored (named in warnings)." })),
    template_id: Type.Optional(Type.String({ description: "Hosted only: accepted and ignored (named in warnings)." })),
  },
  { additionalProperties: false, description: "Runnel's fields, or the hosted API's (settings.name, triggers, steps[].namespace, org_id); hosted-only ones are ignored and named in warnings." },
);


/** A trigger as the hosted API's GET /workflows/<id> lists it (`triggers`); Runnel's own `trigger` stays beside it. */
export const DocumentedTriggerSchema = Type.Object(
  {
    id: Type.String({ description: "The source behind the trigger (dc_…)" }),
    type: Type.String({ description: "http, timer, source or component" }),
    endpoint_url: Type.Optional(Type.String({ description: "HTTP triggers: where requests go" })),
    custom_response: Type.Optional(Type.Boolean({ description: "HTTP triggers: whether the workflow answers the request ($.respond)" })),
    interval_seconds: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: "Timer triggers: seconds between runs; null for a cron schedule" })),
    cron: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "Timer triggers: the cron expression; null for an interval" })),
    timezone: Type.Optional(Type.String({ description: "Timer triggers: the IANA time zone the cron expression runs in; absent for UTC" })),
  },
  { title: "WorkflowTrigger" },
);

/** A step as the hosted API's GET /workflows/<id> lists it (`steps`): `namespace` is the step's name. */
export const DocumentedStepSchema = Type.Object(
  {
    id: Type.String({ description: "c_…: the cellId errors name" }),
    namespace: Type.String({ description: "The step's name: later steps read steps.<namespace>" }),
    disabled: Type.Boolean({ description: "Always false: Runnel runs every step" }),
    component: Type.Boolean({ description: "Always true: every step is a component" }),
    savedComponent: Type.Union([Type.Object({ id: Type.String({ description: "sc_…" }) }), Type.Null()], { description: "null for a built-in action" }),
    key: Type.Union([Type.String(), Type.Null()], { description: "The published action it runs, if any" }),
    props: Type.Record(Type.String(), Json),
  },
  { title: "WorkflowStepDocumented" },
);

/** What waits at a gated workflow's gate (settings.concurrency, rate_limit); only on workflows that have one. */
export const GateViewSchema = Type.Object(
  {
    waiting: Type.Integer({ minimum: 0, description: "Events waiting for a free slot (settings.concurrency); each runs in its turn, in arrival order." }),
    in_flight: Type.Integer({ minimum: 0, description: "Runs admitted and not yet ended: the slots taken." }),
    throttled: Type.Integer({ minimum: 0, description: "Runs admitted but held back by settings.rate_limit until their start time." }),
    oldest_waiting_ms: Type.Union([Type.Integer(), Type.Null()], { description: "When the oldest waiting or throttled event arrived (epoch ms); null when none waits." }),
    next_start_at_ms: Type.Union([Type.Integer(), Type.Null()], { description: "When the next throttled run may start (epoch ms); null when none is throttled." }),
  },
  { title: "WorkflowGate" },
);

export function toGateView(stats: GateStats): Static<typeof GateViewSchema> {
  return { waiting: stats.waiting, in_flight: stats.inFlight, throttled: stats.throttled, oldest_waiting_ms: stats.oldestWaitingSince, next_start_at_ms: stats.nextStartAt };
}

export const WorkflowSchema = Type.Object(
  {
    id: Type.String({ description: "p_…" }),
    name: Type.String(),
    name_slug: Type.String(),
    active: Type.Boolean(),
    trigger: Type.Object({
      type: Type.String({ description: "none, http, timer, source or component" }),
      source_id: Type.Union([Type.String(), Type.Null()]),
      endpoint_url: Type.Optional(Type.String()),
    }),
    triggers: Type.Array(DocumentedTriggerSchema, { description: "The hosted API's form of `trigger`: empty without one" }),
    steps: Type.Array(
      Type.Object({
        id: Type.String({ description: "c_…: the cellId errors name" }),
        name: Type.String(),
        namespace: Type.String({ description: "The same as name, as the hosted API calls it" }),
        key: Type.Union([Type.String(), Type.Null()]),
        component_id: Type.Union([Type.String(), Type.Null()]),
        props: Type.Record(Type.String(), Json),
        retries: Type.Optional(RetryPolicySchema),
      }),
    ),
    respond: Type.String(),
    settings: Type.Object({
      error_notifications: Type.Boolean(),
      error_retention: Type.Integer(),
      retries: Type.Optional(RetryPolicySchema),
      errors_on_each_attempt: Type.Optional(Type.Boolean()),
      concurrency: Type.Optional(Type.Integer({ minimum: 1, description: "Runs of the workflow at once (per concurrency_key value); 1: one at a time, in the order events arrived." })),
      concurrency_key: Type.Optional(Type.String({ description: "The {{ steps.trigger.event… }} expression whose value picks the line a run waits in." })),
      rate_limit: Type.Optional(Type.Object({ runs: Type.Integer({ minimum: 1 }), per_seconds: Type.Integer({ minimum: 1 }) })),
    }),
    is_error_workflow: Type.Boolean(),
    deployment_id: Type.String(),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
    last_run_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "When its newest recorded run started (ISO 8601); null when none is recorded." }),
    runs_24h: Type.Integer({ minimum: 0, description: "Runs started in the last 24 hours (of those kept: about the last 1,000)." }),
    errors_24h: Type.Integer({ minimum: 0, description: "Of those, the runs that failed." }),
    gate: Type.Optional(GateViewSchema),
  },
  { title: "Workflow" },
);
export type WorkflowView = Static<typeof WorkflowSchema>;

/** What the view shows of the workflow's trigger source: where its endpoint is, and its schedule. */
export interface TriggerSourceFacts {
  endpointUrl: string | null;
  timer: TimerSchedule | null;
}

export const NO_TRIGGER_SOURCE: TriggerSourceFacts = { endpointUrl: null, timer: null };

export const NO_RUNS: WorkflowRunStats = { lastRunAt: null, runs: 0, errors: 0 };

export function toWorkflowView(workflow: Workflow, triggerSource: TriggerSourceFacts, runs: WorkflowRunStats = NO_RUNS): WorkflowView {
  const { endpointUrl } = triggerSource;
  return {
    id: workflow.id,
    name: workflow.name,
    name_slug: workflow.nameSlug,
    active: workflow.active,
    trigger: { type: workflow.triggerKind, source_id: workflow.triggerSourceId, ...(endpointUrl ? { endpoint_url: endpointUrl } : {}) },
    triggers: toDocumentedTriggers(workflow, triggerSource),
    steps: workflow.steps.map((step) => ({
      id: step.id,
      name: step.name,
      namespace: step.name,
      key: step.key,
      component_id: step.componentId,
      props: maskSealed(step.props),
      ...(step.retries ? { retries: retryPolicyView(step.retries) } : {}),
    })),
    respond: workflow.respond,
    settings: {
      error_notifications: workflow.settings.errorNotifications,
      error_retention: workflow.settings.errorRetention,
      ...(workflow.settings.retries ? { retries: retryPolicyView(workflow.settings.retries) } : {}),
      ...(workflow.settings.errorsOnEachAttempt ? { errors_on_each_attempt: true } : {}),
      ...gateSettingsView(workflow.settings),
    },
    is_error_workflow: workflow.isErrorWorkflow,
    deployment_id: workflow.deploymentId,
    created_at: toEpochSeconds(workflow.createdAt),
    updated_at: toEpochSeconds(workflow.updatedAt),
    last_run_at: runs.lastRunAt === null ? null : new Date(runs.lastRunAt).toISOString(),
    runs_24h: runs.runs,
    errors_24h: runs.errors,
  };
}

/** What POST and PUT answer: the workflow, and the body's fields that were accepted but ignored (only when there are some). */
export const WorkflowWrittenSchema = Type.Object(
  {
    data: WorkflowSchema,
    warnings: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), { description: "Fields of the request that Runnel accepted but does not act on, and why." }),
    ),
  },
  { title: "WorkflowWritten" },
);

/**
 * The hosted API's `triggers`: an HTTP trigger with its endpoint, a timer
 * with its schedule as a configured timer echoes it (`interval_seconds` and
 * `cron`, the one not used null; `timezone` when the cron has one), for a plain timer and for a source whose
 * component has a timer alike.
 */
export function toDocumentedTriggers(workflow: Workflow, { endpointUrl, timer }: TriggerSourceFacts): Array<Static<typeof DocumentedTriggerSchema>> {
  if (workflow.triggerKind === "none" || workflow.triggerSourceId === null) return [];
  const http = endpointUrl ? { endpoint_url: endpointUrl, custom_response: workflow.respond === "workflow" } : {};
  const zone = timer?.timezone !== undefined ? { timezone: timer.timezone } : {};
  const schedule = timer ? { interval_seconds: timer.intervalSeconds, cron: timer.cron, ...zone } : {};
  return [{ id: workflow.triggerSourceId, type: workflow.triggerKind, ...http, ...schedule }];
}

export function toDocumentedSteps(workflow: Workflow): Array<Static<typeof DocumentedStepSchema>> {
  return workflow.steps.map((step) => ({
    id: step.id,
    namespace: step.name,
    disabled: false,
    component: true,
    savedComponent: step.componentId ? { id: step.componentId } : null,
    key: step.key,
    props: maskSealed(step.props),
  }));
}

/**
 * GET /workflows/<id>: Runnel's `{data}` and, beside it, the `triggers` and
 * `steps` the hosted API documents at the top of this answer, so that
 * clients of either find what they read.
 */
export const WorkflowDetailsSchema = Type.Object(
  { data: WorkflowSchema, triggers: Type.Array(DocumentedTriggerSchema), steps: Type.Array(DocumentedStepSchema) },
  { title: "WorkflowDetails" },
);

const RunAttemptSchema = Type.Object({
  attempt: Type.Integer({ description: "The try of the failed step this was (1: its first)." }),
  step_id: Type.String(),
  step_name: Type.String(),
  code: Type.String({ description: "The error's code (the catalogue of error.code)." }),
  msg: Type.String(),
  failed_at_ms: Type.Integer(),
  will_retry: Type.Boolean(),
  next_attempt_at_ms: Type.Union([Type.Integer(), Type.Null()], { description: "When the next attempt was due; null after the last." }),
});

const RunErrorSchema = Type.Object({ code: Type.String(), msg: Type.String(), name: Type.String(), cellId: Type.String(), ts: Type.String(), stack: Type.String() });

export const RunSchema = Type.Object(
  {
    id: Type.String({ description: "run_…" }),
    workflow_id: Type.String(),
    status: Type.String({
      description:
        "success, error, exited ($.flow.exit), retrying (a step failed and is tried again at next_attempt_at_ms), delayed ($.flow.delay or $.flow.rerun: the run resumes at next_attempt_at_ms) or cancelled (cancelled_by says who; finished_at_ms when)",
    }),
    trigger: Type.Object({ emitter_id: Type.String(), event_id: Type.String(), event: Json }),
    steps: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        status: Type.String({ description: "success, error, exited, skipped, or pending (not reached yet by a run that is retrying an earlier step or delayed)" }),
        $return_value: Json,
        exports: Type.Record(Type.String(), Json),
        summary: Type.Union([Type.String(), Type.Null()]),
        logs: Type.Array(Type.Object({ stream: Type.String(), text: Type.String(), ts: Type.Integer() })),
        started_at_ms: Type.Union([Type.Integer(), Type.Null()]),
        duration_ms: Type.Number(),
        sends: Type.Array(
          Type.Object({
            destination: Type.String({ description: "http, email, s3, emit or sse" }),
            target: Type.String({ description: "Where it goes: METHOD origin/path, s3://bucket/prefix, the channel…" }),
            summary: Type.String({ description: "What it carries, cut to 200 characters; no auth, header values or query values." }),
            status: Type.String({ description: "pending (in the send outbox: carried out after the run, and tried again after a failed attempt), delivered, failed (every attempt failed: a DestinationFailed error in $errors), or not_sent (the run failed)" }),
            detail: Type.Union([Type.String(), Type.Null()], { description: "The answer's status, the object written, why the last attempt failed and when the next is due, or why it was given up." }),
          }),
          { description: "The step's $.send.* calls, in call order." },
        ),
        reused: Type.Boolean({ description: "true: not run again in this run: copied from the failed run it replays from its failed step (replay_of)." }),
      }),
    ),
    error: Type.Union([RunErrorSchema, Type.Null()]),
    exit_reason: Type.Union([Type.String(), Type.Null()]),
    replay_of: Type.Union([Type.String(), Type.Null()], { description: "The $errors event this run replays." }),
    started_at_ms: Type.Integer(),
    finished_at_ms: Type.Integer({ description: "When it ended, or (retrying) when its last attempt ended." }),
    duration_ms: Type.Integer(),
    attempt: Type.Integer({ description: "Executions of the run so far: 1, and one more for each retry of a step." }),
    attempts: Type.Array(RunAttemptSchema, { description: "Its failed attempts of steps with retries, oldest first (empty without retries)." }),
    next_attempt_at_ms: Type.Union([Type.Integer(), Type.Null()], { description: "While retrying: when the next attempt is due; while delayed: when the run resumes." }),
    cancelled_by: Type.Optional(Type.String({ description: "A cancelled run: the id of the user who cancelled it, or cancel_url (its $.flow cancel URL)." })),
    workflow_version: Type.Union([Type.Integer(), Type.Null()], { description: "The workflow version whose code it ran (GET /v1/workflows/{id}/versions); null for runs recorded before versions were kept." }),
  },
  { title: "WorkflowRun" },
);
export type RunView = Static<typeof RunSchema>;

/** POST /workflows/<id>/runs: the event to run on (default {}). */
export const RunNowBodySchema = Type.Object(
  { event: Type.Optional(Type.Unknown({ description: "What the steps see as steps.trigger.event; default {}." })) },
  { additionalProperties: false, title: "RunNowBody" },
);

export const RunNowQuerySchema = Type.Object(
  { wait: Type.Optional(Type.Boolean({ description: "true: answer the finished run (200), waiting up to 30 s; 202 with its id if it takes longer." })) },
  { additionalProperties: false },
);

/** What POST /workflows/<id>/runs answers (202) before the run is recorded. */
export const RunQueuedSchema = Type.Object(
  { run_id: Type.String({ description: "run_…: GET /v1/runs/{run_id} answers 404 until the run is recorded" }) },
  { title: "RunQueued" },
);

export function toRunView(run: WorkflowRun): RunView {
  return {
    id: run.id,
    workflow_id: run.workflowId,
    status: run.status,
    trigger: { emitter_id: run.emitterId, event_id: run.eventId, event: run.triggerEvent },
    steps: run.steps.map((step) => ({
      id: step.id,
      name: step.name,
      status: step.status,
      $return_value: step.returnValue,
      exports: step.exports,
      summary: step.summary,
      logs: step.logs,
      started_at_ms: step.startedAt,
      duration_ms: step.durationMs,
      sends: step.sends,
      reused: step.reused === true,
    })),
    error: run.error,
    exit_reason: run.exitReason,
    replay_of: run.replayOf,
    started_at_ms: run.startedAt,
    finished_at_ms: run.finishedAt,
    duration_ms: run.durationMs,
    attempt: run.attempt ?? 1,
    attempts: (run.attempts ?? []).map((tried) => ({
      attempt: tried.attempt,
      step_id: tried.stepId,
      step_name: tried.stepName,
      code: tried.code,
      msg: tried.msg,
      failed_at_ms: tried.failedAt,
      will_retry: tried.willRetry,
      next_attempt_at_ms: tried.nextAttemptAt,
    })),
    next_attempt_at_ms: run.nextAttemptAt ?? null,
    ...(run.status === "cancelled" ? { cancelled_by: run.cancelledBy ?? "unknown" } : {}),
    workflow_version: run.workflowVersion ?? null,
  };
}

/** An item of `$errors/event_summaries`, exactly the seed's: `event` only with expand=event. */
export const ErrorSummarySchema = Type.Object(
  {
    id: Type.String(),
    indexed_at_ms: Type.Integer(),
    event: Type.Optional(
      Type.Object({
        original_event: Json,
        original_context: Type.Object({
          id: Type.String(),
          ts: Type.String(),
          workflow_id: Type.String(),
          deployment_id: Type.String(),
          source_type: Type.String(),
          verified: Type.Boolean(),
          owner_id: Type.String(),
          platform_version: Type.String(),
        }),
        error: Type.Object({
          code: Type.String(),
          msg: Type.String(),
          cellId: Type.String(),
          ts: Type.String(),
          stack: Type.String(),
          attempt: Type.Optional(Type.Integer({ description: "A failure of a step with retries: which try of the step it was (1: the first)." })),
          will_retry: Type.Optional(Type.Boolean({ description: "A failure of a step with retries: whether another attempt follows (only with settings.errors_on_each_attempt can it be true)." })),
        }),
      }),
    ),
    metadata: Type.Object({ emitter_id: Type.String(), emit_id: Type.String(), name: Type.String() }),
  },
  { title: "ErrorEventSummary" },
);
export type ErrorSummaryView = Static<typeof ErrorSummarySchema>;

export function toErrorSummary(event: StoredEvent, expand: boolean): ErrorSummaryView {
  const view: ErrorSummaryView = { id: event.id, indexed_at_ms: event.indexedAtMs, metadata: { emitter_id: event.emitterId, emit_id: event.emitId ?? "", name: event.channel } };
  if (expand) view.event = event.event as ErrorSummaryView["event"];
  return view;
}

/**
 * An item of a workflow's `event_summaries` (what `$.send.emit` sent), as the
 * hosted API documents it: the emitted event under `event.raw_event`, as it
 * was given to `$.send.emit({ raw_event })`.
 */
export const WorkflowEmitSummarySchema = Type.Object(
  {
    id: Type.String({ description: "<epoch ms>-<sequence>; also the paging cursor" }),
    indexed_at_ms: Type.Integer(),
    event: Type.Optional(Type.Object({ raw_event: Json })),
    metadata: Type.Object({ emit_id: Type.String(), name: Type.String(), emitter_id: Type.String() }),
  },
  { title: "WorkflowEmitSummary" },
);
export type WorkflowEmitSummaryView = Static<typeof WorkflowEmitSummarySchema>;

export function toWorkflowEmitSummary(event: StoredEvent, expand: boolean): WorkflowEmitSummaryView {
  const view: WorkflowEmitSummaryView = { id: event.id, indexed_at_ms: event.indexedAtMs, metadata: { emit_id: emitIdOf(event), name: event.channel, emitter_id: event.emitterId } };
  if (showsEvent(event, expand)) view.event = { raw_event: event.event };
  return view;
}

export const SubscriptionSchema = Type.Object(
  { id: Type.String(), emitter_id: Type.String(), listener_id: Type.String(), event_name: Type.String(), created_at: Type.Integer() },
  { title: "Subscription" },
);

