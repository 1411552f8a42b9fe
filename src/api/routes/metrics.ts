import type { FastifyPluginAsync } from "fastify";
import { ForbiddenError } from "../../domain/errors.js";
import type { Accounts } from "../../engine/accounts.js";
import { bearerSecret } from "../auth.js";

/** The exposition the server renders (server/prometheus-metrics.ts), seen structurally: the API does not import the server. */
export interface MetricsExposition {
  render(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsRouteOptions {
  metrics: MetricsExposition;
  /** "public": anyone who reaches the port; "admin": an admin's API key as Bearer. */
  access: "public" | "admin";
  accounts: Accounts;
}

/** `GET /metrics` in Prometheus' text format; registered only when RUNNEL_METRICS is set (otherwise a 404). */
export const metricsRoutes: FastifyPluginAsync<MetricsRouteOptions> = async (app, { metrics, access, accounts }) => {
  app.get(
    "/metrics",
    { schema: { tags: ["health"], summary: "Prometheus metrics: runs, errors, events, the delivery queue, the runner pool, run latency, the process (RUNNEL_METRICS)", security: access === "public" ? [] : [{ bearerAuth: [] }], produces: ["text/plain"] } },
    async (request, reply) => {
      if (access === "admin") {
        const principal = await accounts.authenticate(bearerSecret(request.headers.authorization));
        if (!principal.user.isAdmin) throw new ForbiddenError("Only an admin's API key may read /metrics. Use the admin's key, or ask the operator to set RUNNEL_METRICS=public.");
      }
      const text = await metrics.render();
      return reply.type(metrics.contentType).send(text);
    },
  );
};
