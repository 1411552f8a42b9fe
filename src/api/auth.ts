import type { FastifyInstance, FastifyRequest } from "fastify";
import { UnauthorizedError } from "../domain/errors.js";
import type { Accounts } from "../engine/accounts.js";
import "./request-context.js";

export interface AuthOptions {
  accounts: Accounts;
  /** Paths under the prefix that need no key (the OpenAPI document). */
  publicPaths: ReadonlySet<string>;
}

/**
 * Requires `Authorization: Bearer <key>` on every route of the instance it is
 * added to, before the body is read, and records the caller on the request.
 */
export function addBearerAuth(app: FastifyInstance, options: AuthOptions): void {
  app.decorateRequest("principal", null);
  app.addHook("onRequest", async (request: FastifyRequest) => {
    if (options.publicPaths.has(request.routeOptions.url ?? "")) return;
    request.principal = await options.accounts.authenticate(bearerSecret(request.headers.authorization));
  });
}

function bearerSecret(header: string | undefined): string {
  if (!header) {
    throw new UnauthorizedError("An API key is required: send the header `Authorization: Bearer <API key>`.");
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) {
    throw new UnauthorizedError("The Authorization header must be `Bearer <API key>`.");
  }
  return match[1];
}
