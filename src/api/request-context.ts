import type { Principal } from "../engine/accounts.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the auth hook on every authenticated /v1 route. */
    principal: Principal | null;
  }
}

/** The authenticated caller; the auth hook guarantees one on /v1 routes. */
export function principalOf(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw new Error("principalOf called on a route without authentication");
  return request.principal;
}
