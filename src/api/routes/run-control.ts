import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Engine } from "../../engine/create-engine.js";
import { principalOf } from "../request-context.js";
import { DataSchema, ErrorBodySchema, errorResponses } from "../schemas/common.js";
import { RunSchema, toRunView } from "../schemas/workflows.js";

const RunCancellingSchema = Type.Object(
  {
    run_id: Type.String(),
    status: Type.Literal("cancelling", { description: "The run is running: it stops before its next step and is recorded cancelled." }),
  },
  { title: "RunCancelling" },
);

/** POST /v1/runs/:id/cancel: a delayed or retrying run is cancelled at once (200, the run); a running one stops at its next step (202). */
export const runCancelRoutes: FastifyPluginAsyncTypebox<{ engine: Pick<Engine, "runControl"> }> = async (app, { engine }) => {
  app.post(
    "/runs/:id/cancel",
    {
      schema: {
        tags: ["runs"],
        summary:
          "Cancel a run: a delayed or retrying one at once (200, the run, recorded cancelled: it never resumes, its pending sends are dropped, no $errors event); a running one stops before its next step and is recorded cancelled (202). 404: no such run; 409: it has ended",
        params: Type.Object({ id: Type.String() }),
        response: { 200: DataSchema(RunSchema), 202: DataSchema(RunCancellingSchema), 409: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const user = principalOf(request).user;
      const outcome = await engine.runControl.cancel(user.id, request.params.id, user.id);
      if (outcome.kind === "cancelled") return reply.code(200).send({ data: toRunView(outcome.run) });
      return reply.code(202).send({ data: { run_id: outcome.runId, status: "cancelling" as const } });
    },
  );
};

const FlowParams = Type.Object({ owner: Type.String(), run: Type.String(), token: Type.String() });

/**
 * The resume and cancel URLs `$.flow.delay` / `$.flow.rerun` return: no key,
 * the token in the address is the capability (outside /v1, as the OAuth pages).
 * GET or POST; a POST's body reaches the resumed step as
 * `$.context.run.callback_request`.
 */
export const flowLinkRoutes: FastifyPluginAsyncTypebox<{ engine: Pick<Engine, "runControl"> }> = async (app, { engine }) => {
  for (const method of ["GET", "POST"] as const) {
    app.route({
      method,
      url: "/flow/:owner/:run/:token/resume",
      schema: { hide: true, params: FlowParams },
      handler: async (request, reply) => {
        const { owner, run, token } = request.params;
        const headers = Object.fromEntries(Object.entries(request.headers).flatMap(([name, value]) => (typeof value === "string" ? [[name, value]] : [])));
        const resumed = await engine.runControl.resumeByToken(owner, run, token, { method, headers, body: request.body ?? null });
        return reply.code(202).send({ data: { run_id: resumed.id, status: "resuming" } });
      },
    });
    app.route({
      method,
      url: "/flow/:owner/:run/:token/cancel",
      schema: { hide: true, params: FlowParams },
      handler: async (request, reply) => {
        const { owner, run, token } = request.params;
        const outcome = await engine.runControl.cancelByToken(owner, run, token);
        return reply.code(200).send({ data: { run_id: run, status: outcome.kind === "cancelled" ? outcome.run.status : "cancelling" } });
      },
    });
  }
};
