import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Store } from "../../store/store.js";

const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal("ok"), Type.Literal("unavailable")]),
  store: Type.String(),
  version: Type.String(),
});

/** `/healthz`: no key needed; 503 when the store does not answer, so load balancers can route around. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ store: Store; version: string }> = async (app, { store, version }) => {
  app.get(
    "/healthz",
    { schema: { tags: ["health"], summary: "Liveness and store reachability", security: [], response: { 200: HealthSchema, 503: HealthSchema } } },
    async (request, reply) => {
      try {
        await store.ping();
        return { status: "ok" as const, store: store.kind, version };
      } catch (error) {
        request.log.warn({ err: error }, "health check: the store did not answer");
        reply.code(503);
        return { status: "unavailable" as const, store: store.kind, version };
      }
    },
  );
};
