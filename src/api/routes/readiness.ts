import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";

/** Whether this process should get traffic now, and if not, why (its store, its migrations, starting or stopping). */
export type ReadinessState = { ready: true } | { ready: false; reason: string };

export interface ReadinessOptions {
  check: () => Promise<ReadinessState>;
  /** What this process serves ("all" for the single process of today). */
  role: string;
}

const ReadinessSchema = Type.Object({
  status: Type.Union([Type.Literal("ready"), Type.Literal("unavailable")]),
  role: Type.String({ description: "What this process serves: all (API, runs and timers), api or worker." }),
  reason: Type.Union([Type.String(), Type.Null()], { description: "Why it is not ready: starting, shutting down, the store not answering, migrations not applied." }),
});

/**
 * `/readyz`: no key. 200 when the store answers, its migrations are applied
 * and the process serves its role; 503 with the reason otherwise (a load
 * balancer stops sending here). `/healthz` stays the liveness check.
 */
export const readinessRoutes: FastifyPluginAsyncTypebox<ReadinessOptions> = async (app, { check, role }) => {
  app.get(
    "/readyz",
    { schema: { tags: ["health"], summary: "Readiness: whether this process should get traffic now, and why not", security: [], response: { 200: ReadinessSchema, 503: ReadinessSchema } } },
    async (_request, reply) => {
      const state = await check();
      if (state.ready) return { status: "ready" as const, role, reason: null };
      reply.code(503);
      return { status: "unavailable" as const, role, reason: state.reason };
    },
  );
};
