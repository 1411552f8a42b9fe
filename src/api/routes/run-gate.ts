import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { RunnelError } from "../../domain/errors.js";
import { parsePageRequest, toPage } from "../../domain/paging.js";
import type { Engine } from "../../engine/create-engine.js";
import { principalOf } from "../request-context.js";
import { DataSchema, errorResponses, PageSchema } from "../schemas/common.js";
import { toWaitingEventView, WaitingEventSchema, WaitingQuerySchema } from "../schemas/run-gate.js";
import { RunSchema, toRunView } from "../schemas/workflows.js";

/**
 * The events waiting at a workflow's gate (settings.concurrency): which ones,
 * in line order, and cancelling one before it runs. They have no run yet,
 * so they are reached by event id.
 */
export const runGateRoutes: FastifyPluginAsyncTypebox<{ engine: Pick<Engine, "workflows"> }> = async (app, { engine }) => {
  const { workflows } = engine;

  app.get(
    "/workflows/:id/waiting",
    {
      schema: {
        tags: ["runs"],
        summary: "The events waiting at the workflow's gate (settings.concurrency) in line order: the shared line first, then each key's line; in arrival order within a line",
        params: Type.Object({ id: Type.String() }),
        querystring: WaitingQuerySchema,
        response: { 200: PageSchema(WaitingEventSchema), ...errorResponses },
      },
    },
    async (request) => {
      const slice = await workflows.waiting(principalOf(request).user.id, request.params.id, parsePageRequest(request.query));
      return toPage({ items: slice.items.map(toWaitingEventView), totalCount: slice.totalCount }, (item) => item.event_id);
    },
  );

  app.post(
    "/workflows/:id/waiting/:event_id/cancel",
    {
      schema: {
        tags: ["runs"],
        summary: "Cancel an event waiting at the workflow's gate: it leaves its line for good and never runs; its run is recorded cancelled (200, the run). 404: it is not waiting (admitted already, or unknown)",
        params: Type.Object({ id: Type.String(), event_id: Type.String() }),
        response: { 200: DataSchema(RunSchema), ...errorResponses },
      },
    },
    async (request) => {
      const { id, event_id: eventId } = request.params;
      const user = principalOf(request).user;
      const run = await workflows.cancelWaiting(user.id, id, eventId, user.id);
      if (!run) {
        throw new RunnelError(
          "NotFound",
          `The event ${eventId} is not waiting at the gate of workflow ${id}: admitted already or unknown. If it is running, cancel its run with POST /v1/runs/<run id>/cancel (its run id is in GET /v1/workflows/${id}/runs).`,
          { kind: "waiting event", id: eventId },
        );
      }
      return { data: toRunView(run) };
    },
  );
};
