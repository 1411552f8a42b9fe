import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { WorkflowRunStats } from "../../domain/activity.js";
import { fromDocumentedWorkflowBody, inGivenTerms, type IgnoredField } from "../../domain/documented-workflow-body.js";
import { parsePageRequest, toPage } from "../../domain/paging.js";
import type { LogEntry, StoredEvent } from "../../domain/sources.js";
import type { Engine } from "../../engine/create-engine.js";
import type { Store } from "../../store/store.js";
import { principalOf } from "../request-context.js";
import { DataSchema, ErrorBodySchema, errorResponses, PageQuerySchema, PageSchema } from "../schemas/common.js";
import { LogSchema, toLogView } from "../schemas/sources.js";
import { ErrorSummarySchema, NO_TRIGGER_SOURCE, RunNowBodySchema, RunNowQuerySchema, RunQueuedSchema, RunSchema, toErrorSummary, toGateView, toRunView, toDocumentedSteps, toWorkflowEmitSummary, toWorkflowView, WorkflowBodySchema, WorkflowDetailsSchema, WorkflowEmitSummarySchema, WorkflowSchema, WorkflowWrittenSchema } from "../schemas/workflows.js";
import type { SseStream, SseStreams } from "../sse.js";
import { checkCursor } from "./source-events.js";
import { waitForRun } from "./wait-for-run.js";
import { ValidationError } from "../../domain/errors.js";
import { readReplayChoice } from "../../engine/workflows/replay-from-step.js";
import { STREAM_CLOSED_EVENT } from "./source-streams.js";
import { gateOf } from "../../domain/run-gate.js";

const IdParams = Type.Object({ id: Type.String() });
const DAY_MS = 24 * 60 * 60 * 1000;
/** How long POST /workflows/<id>/runs?wait=true waits for the run to be recorded. */
const RUN_WAIT_MS = 30_000;
const EventsQuery = Type.Object(
  { ...PageQuerySchema.properties, expand: Type.Optional(Type.Literal("event", { description: "`event`: include each full event" })) },
  { additionalProperties: false },
);
const ReplayedSchema = Type.Object({ error_id: Type.String(), event_id: Type.String() });
/** Checked by readReplayChoice (a 400 naming the field and its values), so any value passes the schema. */
const ReplayChoiceFields = {
  from: Type.Optional(Type.Unknown({ description: '"trigger" (the default: the whole workflow again) or "failed_step" (start at the step that failed, reusing the recorded results, exports and sends of the steps before it).' })),
  with_code: Type.Optional(Type.Unknown({ description: '"current" (the default: the workflow as it is now) or "failed_run" (the version the failed run ran).' })),
};

/** Workflows: create, read, update, delete; their runs, errors (and replay), emitted events, logs and live stream. */
export const workflowsRoutes: FastifyPluginAsyncTypebox<{ engine: Engine; store: Store; streams: SseStreams }> = async (app, { engine, store, streams }) => {
  const { workflows } = engine;
  const runStats = (ownerId: string, workflowIds: string[]) => store.runStats(ownerId, workflowIds, Date.now() - DAY_MS);
  const view = async (workflow: Parameters<typeof toWorkflowView>[0], stats?: Map<string, WorkflowRunStats>) => {
    const source = workflow.triggerSourceId ? await store.findSource(workflow.ownerId, workflow.triggerSourceId) : null;
    const runs = (stats ?? (await runStats(workflow.ownerId, [workflow.id]))).get(workflow.id);
    const shown = toWorkflowView(workflow, source ? { endpointUrl: engine.endpointUrl(source), timer: source.timer } : NO_TRIGGER_SOURCE, runs);
    // A gated workflow shows what waits at its gate (two small queries; others pay nothing).
    return gateOf(workflow.settings) ? { ...shown, gate: toGateView(await store.gateStats(workflow.ownerId, workflow.id, Date.now())) } : shown;
  };
  const written = async (workflow: Parameters<typeof toWorkflowView>[0], ignored: IgnoredField[]) => ({
    data: await view(workflow),
    ...(ignored.length > 0 ? { warnings: ignored } : {}),
  });

  app.post(
    "/workflows",
    {
      schema: {
        tags: ["workflows"],
        summary: "Create a workflow: a trigger and steps (Runnel's body, or the hosted API's)",
        body: WorkflowBodySchema,
        response: { 200: WorkflowWrittenSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { body, ignored, renamed } = fromDocumentedWorkflowBody(request.body);
      const workflow = await workflows.create(principalOf(request).user.id, body).catch((error: unknown) => Promise.reject(inGivenTerms(error, renamed)));
      return written(workflow, ignored);
    },
  );

  app.get(
    "/workflows/:id",
    {
      schema: {
        tags: ["workflows"],
        summary: "A workflow by id (p_…) or name slug; triggers and steps also at the top, as the hosted API answers",
        params: IdParams,
        response: { 200: WorkflowDetailsSchema, ...errorResponses },
      },
    },
    async (request) => {
      const workflow = await workflows.get(principalOf(request).user.id, request.params.id);
      const data = await view(workflow);
      return { data, triggers: data.triggers, steps: toDocumentedSteps(workflow) };
    },
  );

  app.put(
    "/workflows/:id",
    {
      schema: {
        tags: ["workflows"],
        summary: "Update a workflow; fields left out stay as they are (the trigger's endpoint stays the same)",
        params: IdParams,
        body: WorkflowBodySchema,
        response: { 200: WorkflowWrittenSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { body, ignored, renamed } = fromDocumentedWorkflowBody(request.body);
      const workflow = await workflows.update(principalOf(request).user.id, request.params.id, body).catch((error: unknown) => Promise.reject(inGivenTerms(error, renamed)));
      return written(workflow, ignored);
    },
  );

  app.delete(
    "/workflows/:id",
    { schema: { tags: ["workflows"], summary: "Delete a workflow with its inline trigger, runs and events", params: IdParams, response: { 204: Type.Null(), 409: ErrorBodySchema, ...errorResponses } } },
    async (request, reply) => {
      await workflows.remove(principalOf(request).user.id, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/users/me/workflows",
    { schema: { tags: ["workflows"], summary: "Your workflows, newest first", querystring: PageQuerySchema, response: { 200: PageSchema(WorkflowSchema), ...errorResponses } } },
    async (request) => {
      const ownerId = principalOf(request).user.id;
      const slice = await workflows.list(ownerId, parsePageRequest(request.query));
      // One grouped query for the whole page's run counts.
      const stats = await runStats(ownerId, slice.items.map((workflow) => workflow.id));
      const items = await Promise.all(slice.items.map((workflow) => view(workflow, stats)));
      return toPage({ items, totalCount: slice.totalCount }, (item) => item.id);
    },
  );

  app.get(
    "/workflows/:id/runs",
    { schema: { tags: ["runs"], summary: "The workflow's recorded runs, newest first", params: IdParams, querystring: PageQuerySchema, response: { 200: PageSchema(RunSchema), ...errorResponses } } },
    async (request) => {
      const slice = await workflows.runs(principalOf(request).user.id, request.params.id, parsePageRequest(request.query));
      return toPage({ items: slice.items.map(toRunView), totalCount: slice.totalCount }, (item) => item.id);
    },
  );

  app.post(
    "/workflows/:id/runs",
    {
      schema: {
        tags: ["runs"],
        summary:
          "Run the workflow once now on `event` (default {}), whatever its trigger: run now, or a test run with a sample event. Queued durably like any run; answers 202 with the run's id, or with ?wait=true the finished run (waiting up to 30 s, else 202). A workflow created with trigger {\"type\": \"manual\"} (or none) runs only this way",
        params: IdParams,
        querystring: RunNowQuerySchema,
        body: Type.Optional(RunNowBodySchema),
        response: { 200: DataSchema(RunSchema), 202: DataSchema(RunQueuedSchema), 409: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const ownerId = principalOf(request).user.id;
      const { runId } = await workflows.runOnce(ownerId, request.params.id, request.body?.event ?? {});
      if (request.query.wait === true) {
        // A run waiting to retry a step has not finished: it is waited for like one not recorded yet.
        const run = await waitForRun(() => workflows.findRun(ownerId, runId).then((found) => (found?.status === "retrying" ? null : found)), RUN_WAIT_MS);
        if (run) return reply.code(200).send({ data: toRunView(run) });
      }
      return reply.code(202).send({ data: { run_id: runId } });
    },
  );

  app.get(
    "/runs/:id",
    { schema: { tags: ["runs"], summary: "One run: status, trigger event, each step's result, exports, summary, logs and timing", params: IdParams, response: { 200: DataSchema(RunSchema), ...errorResponses } } },
    async (request) => ({ data: toRunView(await workflows.run(principalOf(request).user.id, request.params.id)) }),
  );

  app.get(
    "/workflows/:id/$errors/event_summaries",
    {
      schema: {
        tags: ["errors"],
        summary: "The workflow's most recent errors (100 kept by default), newest first",
        params: IdParams,
        querystring: EventsQuery,
        response: { 200: PageSchema(ErrorSummarySchema), ...errorResponses },
      },
    },
    async (request) => {
      const { expand, ...paging } = request.query;
      const page = parsePageRequest(paging);
      checkCursor(page.before, "before");
      checkCursor(page.after, "after");
      const slice = await workflows.events(principalOf(request).user.id, request.params.id, "$errors", page);
      return toPage({ items: slice.items.map((event) => toErrorSummary(event, expand === "event")), totalCount: slice.totalCount }, (item) => item.id);
    },
  );

  app.post(
    "/workflows/:id/$errors/:eventId/replay",
    {
      schema: {
        tags: ["errors"],
        summary: "Run the workflow again on the error's original event, from the trigger or from the failed step; the run's replay_of names the error",
        params: Type.Object({ id: Type.String(), eventId: Type.String() }),
        body: Type.Optional(Type.Object(ReplayChoiceFields, { additionalProperties: false })),
        response: { 202: DataSchema(ReplayedSchema), 409: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const choice = readReplayChoice(request.body ?? {});
      const { replayed } = await workflows.replay(principalOf(request).user.id, request.params.id, { eventIds: [request.params.eventId] }, choice, true);
      return reply.code(202).send({ data: replayed[0]! });
    },
  );

  app.post(
    "/workflows/:id/$errors/replay",
    {
      schema: {
        tags: ["errors"],
        summary: "Replay many errors: the given ids, or every listed error, optionally only those of one code or step; each from the trigger or from its own failed step",
        params: IdParams,
        body: Type.Optional(
          Type.Object(
            { event_ids: Type.Optional(Type.Array(Type.String())), code: Type.Optional(Type.String({ description: "Only errors of this error.code." })), step_id: Type.Optional(Type.String()), ...ReplayChoiceFields },
            { additionalProperties: false },
          ),
        ),
        response: {
          202: DataSchema(
            Type.Object({
              count: Type.Integer(),
              replayed: Type.Array(ReplayedSchema),
              not_replayed: Type.Array(Type.Object({ error_id: Type.String(), reason: Type.String() }), { description: "Errors that could not be replayed as asked (from their failed step, or with the failed run's code), and why." }),
            }),
          ),
          409: ErrorBodySchema,
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      // Here `code` filters by error code (it came first); which code runs is `with_code`.
      if (body.code === "current" || body.code === "failed_run") {
        throw new ValidationError("code", `code chooses errors by their error code (UserError, Timeout…) here; to choose which code the replay runs, give "with_code": "${body.code}".`);
      }
      const choice = readReplayChoice(body);
      const { replayed, notReplayed } = await workflows.replay(principalOf(request).user.id, request.params.id, { eventIds: body.event_ids, code: body.code, stepId: body.step_id }, choice);
      return reply.code(202).send({ data: { count: replayed.length, replayed, not_replayed: notReplayed } });
    },
  );

  app.get(
    "/workflows/:id/event_summaries",
    {
      schema: {
        tags: ["events"],
        summary: "What the workflow emitted with $.send.emit, newest first",
        params: IdParams,
        querystring: EventsQuery,
        response: { 200: PageSchema(WorkflowEmitSummarySchema), ...errorResponses },
      },
    },
    async (request) => {
      const { expand, ...paging } = request.query;
      const page = parsePageRequest(paging);
      checkCursor(page.before, "before");
      checkCursor(page.after, "after");
      const slice = await workflows.events(principalOf(request).user.id, request.params.id, "", page);
      return toPage({ items: slice.items.map((event) => toWorkflowEmitSummary(event, expand === "event")), totalCount: slice.totalCount }, (item) => item.id);
    },
  );

  app.get(
    "/workflows/:id/logs",
    {
      schema: {
        tags: ["events"],
        summary: "What happened around the workflow's runs ($.send destinations), newest first",
        params: IdParams,
        querystring: PageQuerySchema,
        response: { 200: PageSchema(LogSchema), ...errorResponses },
      },
    },
    async (request) => {
      const workflow = await workflows.get(principalOf(request).user.id, request.params.id);
      const page = parsePageRequest(request.query);
      const slice = await store.listLogs(workflow.ownerId, workflow.id, page);
      return toPage({ items: slice.items.map((log: LogEntry) => toLogView(log)), totalCount: slice.totalCount }, (item) => item.id);
    },
  );

  app.get(
    "/workflows/:id/sse",
    {
      schema: {
        tags: ["events"],
        summary: "Server-sent events of a workflow: what it emits ($.send.emit, `event:` the channel), its errors (`$errors`) and $.send.sse payloads (`event:` their channel)",
        params: IdParams,
      },
    },
    async (request, reply) => {
      let stream: SseStream | undefined;
      const following = await workflows.follow(principalOf(request).user.id, request.params.id, (message) => {
        if (!stream) return;
        if (message.kind === "closed") {
          stream.send({ reason: message.reason }, STREAM_CLOSED_EVENT);
          stream.close();
          return;
        }
        if (message.kind !== "event") return;
        const item = message.item as StoredEvent | { id: string; payload: unknown };
        if ("emitterId" in item) {
          const summary = item.channel === "$errors" ? toErrorSummary(item, true) : toWorkflowEmitSummary(item, true);
          stream.send(summary, message.channel || undefined, summary.id);
        } else stream.send(item, message.channel || undefined);
      });
      stream = streams.start(request, reply);
      await stream.closed;
      following.stop();
    },
  );
};
