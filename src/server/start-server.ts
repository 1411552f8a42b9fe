import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { createApp } from "../api/app.js";
import { publishCatalogAtStart } from "../catalog/publish-at-start.js";
import type { RunnelConfig } from "../config/config.js";
import { generateApiKeySecret } from "../domain/accounts.js";
import { createEngine, type Engine } from "../engine/create-engine.js";
import { Mailer } from "../engine/mail/mailer.js";
import type { InboundMailServer } from "../engine/mail/inbound/inbound-mail-server.js";
import { inboundMailTargets } from "../engine/mail/inbound/inbound-mail-targets.js";
import { loadOrCreateMasterKey, masterKeyPath, settlePendingRotation } from "../engine/master-key.js";
import { createEgressPolicy } from "../domain/egress-policy.js";
import { createSandbox, type Sandbox } from "../sandbox/sandbox.js";
import { openStore } from "../store/open-store.js";
import type { Store } from "../store/store.js";
import { writeAdminKeyFile } from "./admin-key-file.js";
import { reservePort, type PortReservation } from "./port-reservation.js";
import { loadOrCreateInstanceId } from "./instance-id.js";
import { writeServerPid } from "./server-pid-file.js";
import { NO_METRICS } from "../engine/metrics.js";
import { RUNNEL_VERSION } from "../version.js";
import type { PrometheusMetrics } from "./prometheus-metrics.js";
import { ProcessRegistration } from "./process-registration.js";
import { Readiness } from "./readiness.js";
import { EventHub } from "../engine/event-hub.js";
import { nextTickAfter } from "../engine/sources/timer-schedule.js";
import { openJobQueue } from "../queue/open-job-queue.js";
import { openSharedRateLimit, type OpenedRateLimit } from "./rate-limit/open-shared-rate-limit.js";
import type { JobQueue } from "../queue/job-queue.js";
import { tuneGarbageCollection } from "./gc-tuning.js";

export interface StartServerOptions {
  config: RunnelConfig;
  logger: Logger;
  /** Where the first-start admin key is shown to the person starting the server. */
  announce: (text: string) => void;
}

export interface RunningServer {
  /** The address the server listens on, such as http://127.0.0.1:8080. */
  url: string;
  app: FastifyInstance;
  store: Store;
  engine: Engine;
  /** The inbound SMTP listener (RUNNEL_SMTP_LISTEN) and the port it took; null when it is off. */
  inboundMail: { host: string; port: number } | null;
  /** This process's id in the process registry (and on the leases it takes). */
  instanceId: string;
  /** Stops accepting, lets in-flight requests finish, then closes the store. */
  close(): Promise<void>;
}

/** The composition root: configuration → store → engine → HTTP, listening. */
export async function startServer({ config, logger, announce }: StartServerOptions): Promise<RunningServer> {
  tuneGarbageCollection();
  // First of all: a taken port stops start-up before a folder, a database or an admin key exists.
  const reservation = await reservePort(config.host, config.port);
  try {
    return await startOnPort(config, logger, announce, reservation);
  } finally {
    reservation.release();
    // Handed over already when the start succeeded; after a failure their clients are told at once.
    reservation.dropHeld();
  }
}

async function startOnPort(config: RunnelConfig, logger: Logger, announce: (text: string) => void, reservation: PortReservation): Promise<RunningServer> {
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const store = await openStore({ databaseUrl: config.databaseUrl, databasePoolSize: config.databasePoolSize, dataDir: config.dataDir, logger });
  logger.info({ store: store.kind, dataDir: config.dataDir }, "store ready");
  const mailer = new Mailer({ store, smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
  logger.info({ smtp: config.smtpUrl ? new URL(config.smtpUrl).host : null }, config.smtpUrl ? "mail is delivered over SMTP" : "RUNNEL_SMTP_URL is not set: mails stay in the outbox");

  let sandbox: Sandbox | null = null;
  let inboundMail: InboundMailServer | null = null;
  let queue: JobQueue | null = null;
  let rateLimit: OpenedRateLimit | null = null;
  try {
    sandbox = createSandbox({ workDir: join(config.dataDir, "sandbox"), logger, maxRunners: config.maxRunners, runnerMemoryMb: config.runnerMemoryMb, spareMemoryMb: config.limits.memoryMb, bubblewrap: config.sandboxBubblewrap, network: { mode: config.sandboxNetwork, allow: config.egressAllow }, cpuProfiling: config.runnerCpuProfileDir ? { dir: config.runnerCpuProfileDir } : null });
    const singleUserReason = await checkNetworkIsolation(sandbox, store, logger);
    const egressPolicy = config.sandboxNetwork === "policy" ? createEgressPolicy(config.egressAllow) : null;
    const keyPath = masterKeyPath(config.dataDir, config.masterKeyFile);
    const loadedKey = await loadOrCreateMasterKey(config.dataDir, config.masterKey, config.masterKeyFile);
    // A rotation stopped half-way leaves the new key beside the old: the one that opens the store wins.
    const masterKey = config.masterKey ? loadedKey : await settlePendingRotation(keyPath, loadedKey, store);
    const instanceId = await loadOrCreateInstanceId(config.dataDir);
    const openedSandbox = sandbox;
    // api: /v1, endpoints, SSE, console; worker: runs, timers, sends; all: both (the single process).
    const role = config.role;
    const hub = new EventHub();
    queue = await openJobQueue(config, { store, hub, nextTickAfter, logger, claimer: instanceId, leaseMs: config.deliveryLeaseMs, ...(config.queueNamespace ? { namespace: config.queueNamespace } : {}) });
    // A shared queue carries live events to every process: an SSE stream anywhere sees every process's events.
    const acrossProcesses = queue.kind === "local" ? null : queue;
    // The queue's depth where its jobs are: the store's rows (local), or BullMQ's (/metrics, GET /v1/status).
    const openedQueue = queue;
    const queueStats = (now: number = Date.now()) => openedQueue.stats(now);
    if (acrossProcesses) hub.carryOver(acrossProcesses, (error) => logger.warn({ err: error }, "a live event could not be sent to the other processes (streams catch up from the store)"));
    logger.info({ role, queue: queue.kind }, role === "all" ? "serving every role" : `serving the ${role} role`);
    const metrics: PrometheusMetrics | null =
      // prom-client, and the mail parser below, are loaded only by a server that uses them.
      config.metrics === "off" ? null : (await import("./prometheus-metrics.js")).createPrometheusMetrics({ queueStats, poolUsage: () => openedSandbox.usage(), instanceId, role, version: RUNNEL_VERSION, logger });
    const readiness = new Readiness(store, acrossProcesses);
    const engine = createEngine({ metrics: metrics ?? NO_METRICS, store, sandbox, logger, dataDir: config.dataDir, masterKey, limits: config.limits, npmRegistry: config.npmRegistry, mailer, egressPolicy, singleUserReason, maxRunInterruptions: config.maxRunInterruptions, pendingRequests: config.pendingRequests, webhookRetry: config.webhookRetry, sendRetry: config.sendRetry, oauthClients: config.oauthClients, instanceId, hub, acrossProcesses, sharedTimers: acrossProcesses, role, deliveryLeaseMs: config.deliveryLeaseMs, ...(acrossProcesses ? { deliveryQueue: acrossProcesses } : {}) });
    await bootstrapAdmin({ accounts: engine.accounts, dataDir: config.dataDir, adminEmail: config.adminEmail, logger, announce });
    await publishCatalogAtStart(engine.registry, logger);
    const sealedNow = await engine.workflows.sealStoredStepSecrets();
    if (sealedNow > 0) {
      // The rows they replaced may linger in freed pages: rewritten away, once.
      await store.purgeFreedSpace();
      logger.info({ values: sealedNow }, "sealed secret step props that were stored in the clear (saved before steps' secrets were sealed)");
    }

    // Before the API listens: a taken SMTP port stops the start with nothing else listening. Inbound mail is an
    // endpoint: a worker takes none.
    if (config.smtpListen && role !== "worker") {
      const { startInboundMailServer } = await import("../engine/mail/inbound/inbound-mail-server.js");
      inboundMail = await startInboundMailServer({
        ...config.smtpListen,
        domain: config.smtpDomain,
        maxMessageBytes: config.smtpMaxMessageBytes,
        targets: inboundMailTargets(store, engine.sources),
        logger,
      });
    }
    const operations = { readiness: () => readiness.check(), role, instanceId, queueStats, metrics: metrics && config.metrics !== "off" ? { exposition: metrics, access: config.metrics } : null };
    // Before serving: an answer for a caller this process will hold, or a wake-up, must not go unheard.
    await engine.connect();
    // api processes of one installation count a key's requests together (Redis, or PostgreSQL alone); one process, in memory.
    rateLimit = role === "worker" ? null : await openSharedRateLimit(config, logger);
    const app = await createApp({ store, engine, logger, rateLimitPerMinute: config.rateLimitPerMinute, sharedRateLimit: rateLimit?.shared ?? null, isolation: sandbox.isolation, operations });
    await app.ready();
    reservation.release();
    await app.listen({ host: config.host, port: reservation.port });
    reservation.handOver(app.server);
    const url = listeningUrl(app, config);
    engine.setBaseUrl(config.publicUrl ?? url);
    // Timers: with a shared queue, every process puts its schedules in line with the sources; only workers tick.
    await engine.startTimers({ runTicks: role !== "api" });
    // An api process runs nothing itself: what it appends is claimed by the workers (woken over the queue).
    if (role !== "api") {
      // Embedded (SQLite): this process is the only worker, so runs a crash interrupted are ours to run again now.
      // On PostgreSQL, peers may hold leases: only those of this instance's previous run are taken back at once.
      await engine.worker.start({ requeue: store.kind === "sqlite" ? "all" : "own" });
      // A shared queue: what appends record in the store is moved onto it from here (see DeliveryRelay).
      engine.relay?.start();
      // The same for sends a crash cut off: tried again, with the idempotency keys they had.
      await engine.sender.start({ requeue: store.kind === "sqlite" ? "all" : "own" });
    }
    const registration = new ProcessRegistration({
      store,
      instanceId,
      role,
      version: RUNNEL_VERSION,
      url,
      intervalMs: config.heartbeatIntervalMs,
      load: () => ({ busyRunners: openedSandbox.usage().busy, queuedDeliveries: engine.worker.queuedCount() }),
      logger,
    });
    await registration.start();
    readiness.serving();
    logger.info({ url, publicUrl: config.publicUrl ?? url }, `Runnel is listening on ${url}`);
    const removePid = writeServerPid(config.dataDir);

    const openSandbox = sandbox;
    const openInboundMail = inboundMail;
    const openQueue = queue;
    const openRateLimit = rateLimit;
    let closing: Promise<void> | null = null;
    return {
      url,
      app,
      store,
      engine,
      inboundMail: openInboundMail ? { host: openInboundMail.host, port: openInboundMail.port } : null,
      instanceId,
      close() {
        closing ??= (async () => {
          // Unready first, while still serving: a load balancer sees /readyz fail and stops sending before the listener closes.
          readiness.stopping();
          if (config.shutdownDrainMs > 0) {
            logger.info({ drainMs: config.shutdownDrainMs }, "draining: /readyz answers 503 while requests are still served");
            await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
          }
          await openInboundMail?.close();
          await app.close();
          await openRateLimit?.close();
          await engine.stop();
          await registration.stop();
          await openQueue.close();
          await mailer.close();
          await openSandbox.close();
          await store.close();
          removePid();
        })();
        return closing;
      },
    };
  } catch (error) {
    await inboundMail?.close().catch(() => undefined);
    await queue?.close().catch(() => undefined);
    await rateLimit?.close().catch(() => undefined);
    await sandbox?.close().catch(() => undefined);
    await mailer.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw error;
  }
}

/** Why this server may serve one user only, or null; refuses to start when it already has more. */
async function checkNetworkIsolation(sandbox: Sandbox, store: Store, logger: Logger): Promise<string | null> {
  const { network } = sandbox.isolation;
  if (network === "unrestricted") {
    logger.warn("RUNNEL_SANDBOX_NETWORK=unrestricted: user code reaches this server's own network (its loopback, private networks and cloud metadata). Serve only users you trust with that.");
    return null;
  }
  if (network === "policy") return null;
  const reason =
    "This server cannot keep user code off its own network (it needs bubblewrap with network namespaces, which this machine lacks), so it serves one user only. Install bubblewrap (apt-get install bubblewrap), or set RUNNEL_SANDBOX_NETWORK=unrestricted to accept that every user's code can reach this server's network.";
  const users = await store.countUsers();
  if (users > 1) throw new Error(`${reason} It has ${users} users.`);
  return reason;
}

async function bootstrapAdmin(options: { accounts: Engine["accounts"]; dataDir: string; adminEmail: string | null; logger: Logger; announce: (text: string) => void }) {
  const secret = generateApiKeySecret();
  const path = await writeAdminKeyFile(options.dataDir, secret, async () => (await options.accounts.bootstrapAdmin(secret, options.adminEmail)) !== null);
  if (!path) {
    // An admin made before RUNNEL_ADMIN_EMAIL was set gets it now, unless it chose an address itself.
    const filled = options.adminEmail ? await options.accounts.fillAdminEmail(options.adminEmail) : null;
    if (filled) options.logger.info({ email: filled.email }, "gave the admin the address in RUNNEL_ADMIN_EMAIL");
    return;
  }
  options.logger.info({ keyFile: path, email: options.adminEmail }, "created the admin user and its API key");
  if (!options.adminEmail) {
    options.logger.warn("The admin has no e-mail address, so error notices stay in the outbox. Set one with `runnel users update --email you@example.com`, or RUNNEL_ADMIN_EMAIL.");
  }
  options.announce(
    [
      "",
      "  Runnel created the admin user. Its API key (shown this once):",
      "",
      `    ${secret}`,
      "",
      `  It is also saved, readable by you only, in ${path}`,
      "  Log in with:  runnel login",
      "",
    ].join("\n"),
  );
}

function listeningUrl(app: FastifyInstance, config: RunnelConfig): string {
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  // 0.0.0.0 and :: listen everywhere but cannot be dialled; show the loopback name instead.
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host.includes(":") ? `[${config.host}]` : config.host;
  return `http://${host}:${port}`;
}
