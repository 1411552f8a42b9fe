import swagger from "@fastify/swagger";
import rateLimit, { type RateLimitPluginOptions } from "@fastify/rate-limit";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { OptionalKind } from "@sinclair/typebox";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type preHandlerAsyncHookHandler } from "fastify";
import type { Logger } from "pino";
import { workspaceIdOf } from "../domain/accounts.js";
import { NotFoundError, RateLimitedError } from "../domain/errors.js";
import type { Engine } from "../engine/create-engine.js";
import type { Store } from "../store/store.js";
import { RUNNEL_VERSION } from "../version.js";
import { addBearerAuth } from "./auth.js";
import { toHttpError } from "./error-mapping.js";
import { lazySerializers, lazyValidators } from "./lazy-compilers.js";
import { applyFieldSelection, fieldSelectionOf } from "./field-selection.js";
import { activityRoutes } from "./routes/activity.js";
import { apiKeysRoutes } from "./routes/api-keys.js";
import { CREATE_SESSION_PATH, sessionsRoutes } from "./routes/sessions.js";
import { createConsoleAssets } from "./console-assets.js";
import { healthRoutes, type SandboxIsolation } from "./routes/health.js";
import { readinessRoutes, type ReadinessState } from "./routes/readiness.js";
import { metricsRoutes, type MetricsExposition } from "./routes/metrics.js";
import { statusRoutes } from "./routes/status.js";
import { openApiRoutes, OPENAPI_PATH } from "./routes/openapi.js";
import { outboxRoutes } from "./routes/outbox.js";
import { usersRoutes } from "./routes/users.js";
import { subscriptionsRoutes } from "./routes/subscriptions.js";
import { webhooksRoutes } from "./routes/webhooks.js";
import { dataStoresRoutes } from "./routes/data-stores.js";
import { envVarsRoutes } from "./routes/env-vars.js";
import { appsRoutes } from "./routes/apps.js";
import { appAccountsRoutes } from "./routes/app-accounts.js";
import { oauthPagesRoutes } from "./routes/oauth-pages.js";
import { flowLinkRoutes, runCancelRoutes } from "./routes/run-control.js";
import { runGateRoutes } from "./routes/run-gate.js";
import { workflowsRoutes } from "./routes/workflows.js";
import { workflowVersionsRoutes } from "./routes/workflow-versions.js";
import { componentsRoutes } from "./routes/components.js";
import { registryRoutes } from "./routes/registry.js";
import { sourcesRoutes } from "./routes/sources.js";
import { sourceEventsRoutes } from "./routes/source-events.js";
import { documentedStreamsRoutes, sourceStreamsRoutes } from "./routes/source-streams.js";
import { createEndpointHandler } from "./http-endpoint/endpoint-handler.js";
import { parseEndpointUrl } from "./http-endpoint/endpoint-url.js";
import { SseStreams } from "./sse.js";
import { createValidatorCompiler } from "./validation.js";
import { workspaceNotFound } from "./workspace.js";
import type { DeliveryQueueStats } from "../domain/processes.js";

export interface AppOptions {
  store: Store;
  engine: Engine;
  logger: Logger;
  /** Requests per minute per API key on /v1; 0 turns the limit off. */
  rateLimitPerMinute: number;
  /** Where the per-key counts live when api processes share them (server/rate-limit/); absent or null: in this process. */
  sharedRateLimit?: SharedRateLimit | null;
  /** How user code is isolated on this machine, shown by /healthz so that an operator sees what is not enforced. */
  isolation?: SandboxIsolation;
  /** Where the built web console is (dist/ui); by default next to the compiled server. */
  uiDir?: string;
  /** /readyz, /metrics and /v1/status (server/start-server.ts); without it /readyz answers from the store alone. */
  operations?: OperationsOptions;
}

/** What the operator's routes read: readiness, the metrics exposition (null: RUNNEL_METRICS off, no route) and this process. */
export interface OperationsOptions {
  readiness: () => Promise<ReadinessState>;
  role: string;
  metrics: { exposition: MetricsExposition; access: "public" | "admin" } | null;
  instanceId: string | null;
  /** The job queue's depth (the store's rows, or BullMQ's jobs); absent: the store's delivery rows. */
  queueStats?: (now: number) => Promise<DeliveryQueueStats>;
}

/** API bodies carry component code and props; 5 MB is far above any real one. */
const API_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

/** Builds the HTTP application; listening is the caller's business, so tests can `inject()` API routes (sources' endpoints are served by the server itself, see serverFactory). */
export async function createApp(options: AppOptions): Promise<FastifyInstance> {
  // Responses finished during shutdown close their connection, so that a keep-alive
  // socket does not hold the process open until its idle timeout.
  let closing = false;
  // A worker process (RUNNEL_ROLE=worker) serves only the operator's routes: /healthz, /readyz, /metrics.
  const servesApi = options.operations?.role !== "worker";
  const endpoints = createEndpointHandler({ sources: options.engine.sources, logger: options.logger, isClosing: () => closing });
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    // One line per request, written by the onResponse hook below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: API_BODY_LIMIT_BYTES,
    // A data store key (1 KB of UTF-8) travels percent-encoded in the path: up to 3 KB (Fastify's default is 100 characters).
    routerOptions: { maxParamLength: 4096 },
    // Close idle keep-alive sockets on shutdown so that close() does not wait on them.
    forceCloseConnections: "idle",
    // The router's own errors (a path part too long, a URL that does not decode) in the API's error shape too.
    frameworkErrors: (error, _request, reply) => {
      const { status, body } = toHttpError(error);
      void (reply as unknown as FastifyReply).code(status).send(body);
    },
    // A request Node cannot even parse (headers or URL too large, bad framing): answered in the same shape.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return socket.destroy();
      const tooLarge = (error as { code?: string }).code === "HPE_HEADER_OVERFLOW";
      const status = tooLarge ? 431 : 400;
      const message = tooLarge ? "The request's URL and headers are larger than this server accepts (16 KB). Send less in them." : "The request could not be parsed as HTTP.";
      const body = JSON.stringify({ error: { code: tooLarge ? "RequestTooLarge" : "MalformedRequest", message } });
      socket.end(`HTTP/1.1 ${status} ${tooLarge ? "Request Header Fields Too Large" : "Bad Request"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    },
    // Sources' endpoints are served beside Fastify, on the same server (see endpoint-handler.ts).
    serverFactory: (fastifyHandler, settings) => {
      const server = createServer((request: IncomingMessage, response: ServerResponse) => {
        const address = parseEndpointUrl(request.url ?? "");
        if (address && servesApi) endpoints(request, response, address);
        else fastifyHandler(request, response);
      });
      // What Fastify sets on a server it creates itself (it passes its options with their defaults filled in).
      const timeouts = settings as { keepAliveTimeout?: number; requestTimeout?: number; connectionTimeout?: number };
      server.keepAliveTimeout = timeouts.keepAliveTimeout ?? 72_000;
      server.requestTimeout = timeouts.requestTimeout ?? 0;
      server.setTimeout(timeouts.connectionTimeout ?? 0);
      return server;
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(lazyValidators(createValidatorCompiler()));
  app.setSerializerCompiler(lazySerializers());

  const routeNotFound = (request: FastifyRequest) => {
    const { status, body } = toHttpError(new NotFoundError("route", `${request.method} ${request.url.split("?")[0]}`));
    body.error.message = servesApi
      ? `There is no route ${request.method} ${request.url.split("?")[0]}. The API is described at ${OPENAPI_PATH}.`
      : `This process is a worker (RUNNEL_ROLE=worker): it serves /healthz, /readyz and /metrics only. Send ${request.method} ${request.url.split("?")[0]} to an api process.`;
    return { status, body };
  };

  app.setErrorHandler((error, request, reply) => {
    // No route matched: that is the answer, whatever the body parser thought of the body (an empty JSON body, say).
    if (request.is404) {
      const { status, body } = routeNotFound(request);
      return reply.code(status).send(body);
    }
    const { status, body, unexpected } = toHttpError(error);
    if (unexpected) request.log.error({ err: error, url: request.url }, "request failed");
    return reply.code(status).send(body);
  });

  // The web console (dist/ui): `/`, its assets, and index.html for its client routes (a browser's GET of a path no route has).
  const consoleAssets = createConsoleAssets({ uiDir: options.uiDir });
  app.setNotFoundHandler(async (request, reply) => {
    if (servesApi && (await consoleAssets.fallback(request, reply))) return reply;
    const { status, body } = routeNotFound(request);
    return reply.code(status).send(body);
  });

  const streams = new SseStreams();
  app.addHook("preClose", async () => {
    closing = true;
    streams.closeAll();
  });
  // Both hooks run on every API request: callback style, so that they cost no promise.
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });

  // include / exclude (the hosted API's common parameters) narrow what a read answers. After serialization, whose
  // schemas require every field; the answer is parsed again only when they are asked for (checked cheaply first).
  app.addHook("onSend", (request, reply, payload, done) => {
    if (request.method !== "GET" || reply.statusCode >= 400 || typeof payload !== "string" || !request.url.includes("clude=")) return done(null, payload);
    const selection = fieldSelectionOf(request.url);
    if (!selection) return done(null, payload);
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      // Not a JSON answer: nothing to select from.
      return done(null, payload);
    }
    done(null, JSON.stringify(applyFieldSelection(parsed, selection)));
  });

  app.addHook("onResponse", (request, reply, done) => {
    // Request loggers are children of this one and no route sets its own level.
    if (options.logger.isLevelEnabled("info")) {
      request.log.info(
        { method: request.method, url: request.routeOptions.url ?? request.url.split("?")[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
        "request",
      );
    }
    done();
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "Runnel API", version: RUNNEL_VERSION, description: "Sources, workflows and their events and errors." },
      components: {
        securitySchemes: {
          bearerAuth: { type: "http", scheme: "bearer" },
          // The web console's session (POST /v1/sessions); unsafe methods also need the server's own Origin.
          cookieAuth: { type: "apiKey", in: "cookie", name: "runnel_session" },
        },
      },
      security: [{ bearerAuth: [] }, { cookieAuth: [] }],
    },
  });

  // The address links and cookies are made for; known once the server listens.
  const publicUrl = () => options.engine.baseUrl();

  await app.register(healthRoutes, { store: options.store, version: RUNNEL_VERSION, isolation: options.isolation ?? null });
  const operations = options.operations ?? storeOnlyOperations(options.store);
  await app.register(readinessRoutes, { check: operations.readiness, role: operations.role });
  if (operations.metrics) await app.register(metricsRoutes, { metrics: operations.metrics.exposition, access: operations.metrics.access, accounts: options.engine.accounts });
  if (!servesApi) return app;

  // One limiter, one count per key, for every keyed route: /v1 and the stream addresses outside it (an SSE stream is
  // a request like any other; left out, a client could open them without end). Applied after auth (preHandler), so
  // that it counts per key.
  const limitPerKey = options.rateLimitPerMinute > 0 ? await perKeyRateLimit(app, options.rateLimitPerMinute, options.sharedRateLimit ?? null) : null;

  await app.register(
    async (v1) => {
      addBearerAuth(v1, { accounts: options.engine.accounts, sessions: options.engine.sessions, publicUrl, publicPaths: new Set([OPENAPI_PATH, CREATE_SESSION_PATH]) });
      acceptMissingOptionalBodies(v1);
      checkWorkspaceParameters(v1);
      if (limitPerKey) v1.addHook("preHandler", limitPerKey);
      await v1.register(openApiRoutes, { document: () => app.swagger() });
      await v1.register(usersRoutes, { accounts: options.engine.accounts });
      await v1.register(sessionsRoutes, { sessions: options.engine.sessions, publicUrl });
      await v1.register(apiKeysRoutes, { accounts: options.engine.accounts });
      await v1.register(componentsRoutes, { sources: options.engine.sources });
      await v1.register(registryRoutes, { registry: options.engine.registry });
      await v1.register(sourcesRoutes, { sources: options.engine.sources, endpointUrl: options.engine.endpointUrl });
      await v1.register(sourceEventsRoutes, { sources: options.engine.sources });
      await v1.register(sourceStreamsRoutes, { sources: options.engine.sources, streams });
      await v1.register(outboxRoutes, { store: options.store });
      await v1.register(workflowsRoutes, { engine: options.engine, store: options.store, streams });
      await v1.register(runCancelRoutes, { engine: options.engine });
      await v1.register(runGateRoutes, { engine: options.engine });
      await v1.register(workflowVersionsRoutes, { engine: options.engine });
      await v1.register(subscriptionsRoutes, { subscriptions: options.engine.subscriptions });
      await v1.register(webhooksRoutes, { webhooks: options.engine.webhooks });
      await v1.register(dataStoresRoutes, { dataStores: options.engine.dataStores });
      await v1.register(envVarsRoutes, { envVars: options.engine.envVars });
      await v1.register(activityRoutes, { store: options.store });
      await v1.register(appsRoutes, { apps: options.engine.apps });
      await v1.register(appAccountsRoutes, { appAccounts: options.engine.appAccounts });
      await v1.register(statusRoutes, { store: options.store, instanceId: operations.instanceId, ...(operations.queueStats ? { queueStats: operations.queueStats } : {}) });
    },
    { prefix: "/v1" },
  );

  // The browser's pages of an OAuth connection: no key, the one-time state says whose connection it is.
  await app.register(oauthPagesRoutes, { appAccounts: options.engine.appAccounts, sessions: options.engine.sessions, publicUrl });
  // The resume and cancel URLs of delayed runs ($.flow.delay / $.flow.rerun): no key, their token is the capability.
  await app.register(flowLinkRoutes, { engine: options.engine });

  // The hosted service's stream addresses, outside /v1 as it has them; the same Bearer key as the /v1 streams.
  await app.register(
    async (sse) => {
      addBearerAuth(sse, { accounts: options.engine.accounts, sessions: options.engine.sessions, publicUrl, publicPaths: new Set() });
      if (limitPerKey) sse.addHook("preHandler", limitPerKey);
      await sse.register(documentedStreamsRoutes, { sources: options.engine.sources, streams });
    },
    { prefix: "/sse" },
  );

  await app.register(consoleAssets.routes);

  return app;
}

/** An app built without the server around it (tests that inject): ready while its store answers; no metrics. */
function storeOnlyOperations(store: Store): OperationsOptions {
  return {
    role: "all",
    metrics: null,
    instanceId: null,
    async readiness() {
      try {
        await store.ping();
        return { ready: true };
      } catch (error) {
        return { ready: false, reason: `the store does not answer: ${error instanceof Error ? error.message : String(error)}` };
      }
    },
  };
}

/** The plugin's own Redis store (an ioredis client and a key prefix), or a store class of ours (PostgreSQL). */
export type SharedRateLimit = Pick<RateLimitPluginOptions, "redis" | "nameSpace"> | Pick<RateLimitPluginOptions, "store">;

/**
 * The per-key limit, as a hook for the scopes that need it. Registered once
 * at the root with `global: false` (no route gets it by itself), so that the
 * scopes that add the hook share one store: a key's requests to /v1 and to
 * /sse count against the same budget.
 */
async function perKeyRateLimit(app: FastifyInstance, perMinute: number, shared: SharedRateLimit | null): Promise<preHandlerAsyncHookHandler> {
  await app.register(rateLimit, {
    ...shared,
    // A shared store that does not answer lets requests through (it logs why): the API stays up without its limit.
    ...(shared ? { skipOnError: true } : {}),
    global: false,
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => request.principal?.keyId ?? request.ip,
    errorResponseBuilder: (_request, context) =>
      new RateLimitedError(`Too many requests: this key may make ${context.max} a minute. Try again in ${context.after}.`, {
        retry_after_seconds: Math.ceil(context.ttl / 1000),
      }),
  });
  return app.rateLimit();
}

/**
 * Routes whose body is optional (or that take none) accept a request without
 * one, also when it says Content-Type: application/json with nothing after it,
 * as the seed's own subscription request does. The optional body is then
 * validated as `{}`. A route that needs a body still answers an empty one
 * with MalformedBody.
 */
function acceptMissingOptionalBodies(scope: FastifyInstance): void {
  const parseJson = scope.getDefaultJsonParser("error", "error");
  scope.removeContentTypeParser("application/json");
  scope.addContentTypeParser("application/json", { parseAs: "string" }, (request, body: string, done) => {
    if (body === "" && !needsBody(request)) return done(null, undefined);
    parseJson(request, body, done);
  });
  scope.addHook("preValidation", async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body !== undefined && !needsBody(request)) request.body = {};
  });
}

/**
 * The hosted API's `org_id` / `workspace_id`, sent by its clients on any
 * call: the caller's own workspace passes (it is the only one), another is a
 * 404 as any resource of another user is. Read from the URL and the JSON
 * body, before the route's own validation, and taken out of both once
 * checked: a strict body or a write's strict query (`POST /webhooks?url=…&org_id=…`,
 * `POST /subscriptions?…&org_id=…`, as the hosted API's clients send them)
 * must not refuse them as unknown.
 */
function checkWorkspaceParameters(scope: FastifyInstance): void {
  scope.addHook("preValidation", (request, _reply, done) => {
    const body = typeof request.body === "object" && request.body !== null ? (request.body as Record<string, unknown>) : {};
    const inQuery = request.url.includes("org_id=") || request.url.includes("workspace_id=");
    if (!request.principal || (!inQuery && !("org_id" in body) && !("workspace_id" in body))) return done();
    const own = workspaceIdOf(request.principal.user.id);
    const query = inQuery ? new URLSearchParams(request.url.slice(request.url.indexOf("?") + 1)) : null;
    for (const name of ["org_id", "workspace_id"]) {
      const given = query?.get(name) ?? (typeof body[name] === "string" ? (body[name] as string) : null);
      if (given !== null && given !== "" && given !== own) return done(workspaceNotFound(given));
      // Checked, and of no further use: a strict body or query must not refuse it.
      delete body[name];
      if (query && typeof request.query === "object" && request.query !== null) delete (request.query as Record<string, unknown>)[name];
    }
    done();
  });
}

/** Whether the route declares a body that is not `Type.Optional`. */
function needsBody(request: FastifyRequest): boolean {
  const schema = request.routeOptions.schema?.body as { [OptionalKind]?: unknown } | undefined;
  return schema !== undefined && schema[OptionalKind] !== "Optional";
}
