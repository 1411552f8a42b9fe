import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Store } from "../../store/store.js";

/** How user code is isolated, as the sandbox reports it (its Isolation, read structurally: the API does not import the sandbox). */
export interface SandboxIsolation {
  network: "policy" | "unenforced" | "unrestricted";
  bubblewrap: boolean;
  permissionModel: boolean;
  memory: "cgroup-v2" | "cgroup-v1" | "rlimit";
}

const SandboxSchema = Type.Object({
  network: Type.Union([Type.Literal("policy"), Type.Literal("unenforced"), Type.Literal("unrestricted")], {
    description:
      "policy: user code reaches the public internet and RUNNEL_EGRESS_ALLOW only, enforced outside its process; unenforced: this machine cannot enforce that (no bubblewrap with network namespaces), so the server serves one user; unrestricted: turned off by RUNNEL_SANDBOX_NETWORK.",
  }),
  bubblewrap: Type.Boolean({ description: "Runners run under bubblewrap (namespaces)." }),
  permission_model: Type.Boolean({ description: "Node's permission model limits what runners read and start." }),
  memory: Type.Union([Type.Literal("cgroup-v2"), Type.Literal("cgroup-v1"), Type.Literal("rlimit")], {
    description: "How a runner's memory is bounded as a whole (heap, Buffers, native memory): a cgroup of its own, or RLIMIT_AS where no cgroup can be made.",
  }),
});

const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal("ok"), Type.Literal("unavailable")]),
  store: Type.String(),
  version: Type.String(),
  sandbox: Type.Optional(SandboxSchema),
});

/** `/healthz`: no key needed; 503 when the store does not answer, so load balancers can route around. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ store: Store; version: string; isolation: SandboxIsolation | null }> = async (app, { store, version, isolation }) => {
  const sandbox = isolation ? { network: isolation.network, bubblewrap: isolation.bubblewrap, permission_model: isolation.permissionModel, memory: isolation.memory } : undefined;
  app.get(
    "/healthz",
    { schema: { tags: ["health"], summary: "Liveness, store reachability and how user code is isolated", security: [], response: { 200: HealthSchema, 503: HealthSchema } } },
    async (request, reply) => {
      try {
        await store.ping();
        return { status: "ok" as const, store: store.kind, version, ...(sandbox ? { sandbox } : {}) };
      } catch (error) {
        request.log.warn({ err: error }, "health check: the store did not answer");
        reply.code(503);
        return { status: "unavailable" as const, store: store.kind, version, ...(sandbox ? { sandbox } : {}) };
      }
    },
  );
};
