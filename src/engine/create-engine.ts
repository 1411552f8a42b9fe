import type { AdmissionLimits } from "../domain/admission-limits.js";
import { EndpointAdmission } from "./sources/endpoint-admission.js";
import { join } from "node:path";
import type { Logger } from "pino";
import { ComponentBundler } from "../components/component-bundler.js";
import { PackageCache } from "../components/packages/package-cache.js";
import { RegistryClient } from "../components/packages/registry-client.js";
import { registryLocator } from "../components/packages/registry-url.js";
import { createEgressPolicy, type EgressPolicy } from "../domain/egress-policy.js";
import type { DeployedSource } from "../domain/sources.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { ClaimedDelivery, Store } from "../store/store.js";
import { Accounts } from "./accounts.js";
import { Sessions } from "./sessions.js";
import { BundleFiles } from "./bundle-files.js";
import { ComponentLoader } from "./component-loader.js";
import { DataStoresService } from "./data-stores/data-stores-service.js";
import { EventHub, type LiveTransport } from "./event-hub.js";
import { ChangesAcrossProcesses } from "./changes-across-processes.js";
import { WakeAcrossProcesses } from "./wake-across-processes.js";
import { carryAnswersAcross } from "./workflows/answers-across-processes.js";
import { LateFaults } from "./late-faults.js";
import type { Mailer } from "./mail/mailer.js";
import { RegistryService } from "./registry-service.js";
import { SecretBox } from "./secrets.js";
import { DEFAULT_RUN_LIMITS, SourceInvoker, type RunLimits } from "./sources/invoker.js";
import { SourceLifecycle } from "./sources/lifecycle.js";
import { SourcesService } from "./sources/service.js";
import { TimerScheduler } from "./sources/timer-scheduler.js";
import { QueueTimers, type TimerQueue } from "./sources/queue-timers.js";
import { AwaitedResponses } from "./workflows/awaited-responses.js";
import { builtinActions } from "./workflows/builtin-actions.js";
import { DeliveryWorker, type DeliveryQueue } from "./workflows/delivery-worker.js";
import { DeliveryRelay } from "./workflows/delivery-relay.js";
import { QueueHandOff } from "./workflows/queue-hand-off.js";
import { LocalJobQueue } from "../queue/local/local-job-queue.js";
import type { DeliveryHandOff } from "./sources/result-writer.js";
import { nextTickAfter } from "./sources/timer-schedule.js";
import { ManualRunsOnWorkers, type SourceRunOutcome } from "./sources/manual-runs-on-workers.js";
import { limitsByTrigger } from "./sources/run-limits.js";
import { createDestinations } from "./workflows/send-destinations.js";
import { SendOutboxWorker } from "./workflows/send-outbox-worker.js";
import { DEFAULT_SEND_RETRY, type SendRetryPolicy } from "../domain/durable-sends.js";
import { DEFAULT_MAX_RUN_INTERRUPTIONS, RunExecutor } from "./workflows/run-executor.js";
import { RunControl } from "./workflows/run-control.js";
import { SubscriptionsService } from "./workflows/subscriptions-service.js";
import { WorkflowResponses } from "./workflows/workflow-responses.js";
import { WorkflowsService } from "./workflows/workflows-service.js";
import { SourceListener } from "./listeners/source-listener.js";
import { WebhookSender } from "./webhooks/webhook-sender.js";
import { WebhooksService } from "./webhooks/webhooks-service.js";
import { EnvVarsService } from "./env-vars.js";
import { AccountAuth } from "./apps/account-auth.js";
import { AppAccountsService } from "./apps/app-accounts-service.js";
import { AppCatalog, type OAuthClient } from "./apps/app-catalog.js";
import { DEFAULT_WEBHOOK_RETRY, type WebhookRetryPolicy } from "../domain/webhooks.js";
import type { Metrics } from "./metrics.js";

export interface EngineOptions {
  store: Store;
  sandbox: Sandbox;
  logger: Logger;
  dataDir: string;
  masterKey: Buffer;
  limits?: RunLimits;
  /** The npm registry for component imports; null or absent: the one npm is configured with. */
  npmRegistry?: string | null;
  /** The mail room (outbox, SMTP); absent in setups that send no mail. */
  mailer?: Mailer;
  /** What `$.send.http` may connect to, as user code may; null: anything (RUNNEL_SANDBOX_NETWORK=unrestricted). Default: the public internet only. */
  egressPolicy?: EgressPolicy | null;
  /** Set when the server must serve one user only: why (see Accounts). */
  singleUserReason?: string | null;
  /** A workflow run cut off this many times by its process dying becomes an error instead (default 3). */
  maxRunInterruptions?: number;
  /** Endpoint requests waiting for their runs, in all and per account, before 503 (default DEFAULT_ADMISSION_LIMITS). */
  pendingRequests?: AdmissionLimits;
  /** This process's instance id, recorded with the deliveries it leases. */
  instanceId?: string;
  /** Attempts per event to a webhook and the first backoff (RUNNEL_WEBHOOK_MAX_ATTEMPTS, RUNNEL_WEBHOOK_RETRY_BASE_MS). */
  webhookRetry?: WebhookRetryPolicy;
  /** Attempts per `$.send.*` call and the first backoff (RUNNEL_SEND_MAX_ATTEMPTS, RUNNEL_SEND_RETRY_BASE_MS). */
  sendRetry?: SendRetryPolicy;
  /** OAuth clients from the environment (RUNNEL_OAUTH_<SLUG>_CLIENT_ID / _CLIENT_SECRET), by <SLUG>. */
  oauthClients?: Readonly<Record<string, OAuthClient>>;
  /** Where runs and events are counted (RUNNEL_METRICS); none by default. */
  metrics?: Metrics;
  /** The live fan-out; made here when absent. Handed in when the job queue (opened before the engine) needs it too. */
  hub?: EventHub;
  /**
   * Live messages to the other processes of the installation (a shared job
   * queue's publish/subscribe); absent or null: this process is alone.
   * The hub must already carry its messages over it.
   */
  acrossProcesses?: LiveTransport | null;
  /** How long a claimed delivery is this process's before another may take it over (RUNNEL_DELIVERY_LEASE_SECONDS). Default 30 s (renewed while held). */
  deliveryLeaseMs?: number;
  /**
   * The shared queue's timers (RUNNEL_QUEUE=redis|postgres): timer sources
   * become its job schedulers and tick through it, not through the store's
   * claimTick. Absent or null: the TimerScheduler (embedded, or local queue).
   */
  sharedTimers?: TimerQueue | null;
  /**
   * Where the delivery worker claims and settles deliveries: a shared
   * BullMQ queue (scale-out). Absent: the store's own leased rows (the
   * local adapter), as the embedded server always had.
   */
  deliveryQueue?: DeliveryQueue;
  /** What this process does (RUNNEL_ROLE): which messages from other processes it listens to. Default "all". */
  role?: "all" | "api" | "worker";
}

export interface Engine {
  accounts: Accounts;
  /** The web console's sessions and one-time sign-in links. */
  sessions: Sessions;
  sources: SourcesService;
  /** The user's component registry: publish a component, resolve a key (and version) to a published one. */
  registry: RegistryService;
  scheduler: TimerScheduler;
  workflows: WorkflowsService;
  /** Cancel of runs, and the resume and cancel URLs of delayed runs. */
  runControl: RunControl;
  subscriptions: SubscriptionsService;
  /** Webhooks: URLs subscriptions deliver events to. */
  webhooks: WebhooksService;
  /** The user's named data stores (`data_store` props), for the API and for components. */
  dataStores: DataStoresService;
  /** Each user's environment variables, which steps receive as `{{process.env.NAME}}`. */
  envVars: EnvVarsService;
  /** The apps this server knows (shipped and added) and their OAuth clients. */
  apps: AppCatalog;
  /** Each user's connected accounts of apps, and the OAuth connection flow. */
  appAccounts: AppAccountsService;
  /** Takes deliveries from the durable queue and runs workflows; started by the server. */
  worker: DeliveryWorker;
  /**
   * Moves the deliveries appends record in the store to a queue that is
   * not the store (BullMQ); null when the queue is the store's own rows.
   * Started by the server with the worker.
   */
  relay: DeliveryRelay | null;
  /** Carries out the `$.send.*` calls of recorded runs from the send outbox; started by the server. */
  sender: SendOutboxWorker;
  /** The mail room, as handed in; null when none was. */
  mailer: Mailer | null;
  /** The address endpoints are shown and reached at; known once the server listens. */
  setBaseUrl(url: string): void;
  /** The server's public address without a trailing slash (RUNNEL_PUBLIC_URL, else where it listens): for links it hands out. */
  baseUrl(): string;
  endpointUrl(source: DeployedSource): string | null;
  /**
   * Listens to the other processes (their workflows' answers to callers
   * held here, wake-ups for the work they append); nothing when alone.
   * Called once, before the server serves.
   */
  connect(): Promise<void>;
  /**
   * Starts timer sources' ticks: with a shared queue, reconciles its
   * schedules with the sources (every role) and, when `runTicks`, takes
   * ticks from it; otherwise starts the TimerScheduler when `runTicks`.
   */
  startTimers(options: { runTicks: boolean }): Promise<void>;
  /** Stops timers and waits for runs in flight. */
  stop(): Promise<void>;
}

/** How long a deploy or update waits for the shared queue to take its timer's schedule. */
const TIMER_SYNC_TIMEOUT_MS = 5_000;

/** The longest a relay or an append's hand-off holds the rows it is moving onto the queue (see DeliveryRelay, QueueHandOff). */
const RELAY_LEASE_MS = 30_000;

/** Rows are held only between a claim and an enqueue (milliseconds): a dead holder's come back soon, never later than a run's lease. */
function relayLeaseMs(deliveryLeaseMs: number | undefined): number {
  return Math.min(RELAY_LEASE_MS, deliveryLeaseMs ?? RELAY_LEASE_MS);
}

/** Wires the engine's parts; the store and sandbox are handed in, never chosen here. */
export function createEngine(options: EngineOptions): Engine {
  const { store, sandbox, logger } = options;
  let baseUrl = "";
  const endpointUrl = (source: DeployedSource) => (source.endpointToken ? `${baseUrl}/e/${source.endpointToken}` : null);

  const hub = options.hub ?? new EventHub();
  const role = options.role ?? "all";
  const across = options.acrossProcesses ?? null;
  // Workers of other processes claim what this one appends: told at once, not at their next poll.
  const wakeOthers = across ? new WakeAcrossProcesses(across, logger) : null;
  const changesAcross = across ? new ChangesAcrossProcesses(across, logger) : null;
  const secrets = new SecretBox(options.masterKey);
  const egressPolicy = options.egressPolicy === undefined ? createEgressPolicy() : options.egressPolicy;
  const apps = new AppCatalog({ store, secrets, ...(options.oauthClients ? { environmentClients: options.oauthClients } : {}) });
  const accountAuth = new AccountAuth({ store, secrets, catalog: apps, egressPolicy, logger, ...(options.instanceId ? { instanceId: options.instanceId } : {}) });
  const appAccounts = new AppAccountsService({ store, secrets, catalog: apps, egressPolicy, callbackUrl: () => `${baseUrl}/oauth/callback` });
  const registry = new RegistryClient({ registryUrl: registryLocator({ configured: options.npmRegistry ?? null }) });
  const cache = new PackageCache({ root: join(options.dataDir, "packages"), download: (key, tarball, integrity) => registry.tarball(key, tarball, integrity) });
  const bundler = new ComponentBundler({ cache, registry });
  const bundleFiles = new BundleFiles(join(options.dataDir, "bundles"));
  const loader = new ComponentLoader({ store, sandbox, bundler, bundleFiles });
  const limits = options.limits ?? DEFAULT_RUN_LIMITS;
  // The worker is made below; events appended before then have nobody to wake.
  let worker: DeliveryWorker | null = null;
  let relay: DeliveryRelay | null = null;
  const onAppended = () => {
    worker?.wake();
    relay?.wake();
    wakeOthers?.announce("deliveries");
  };
  // The embedded queue is made (and closed) here; a shared one is opened and closed by the server.
  const ownQueue = options.deliveryQueue
    ? null
    : new LocalJobQueue({ store, hub, nextTickAfter, logger, ...(options.instanceId ? { claimer: options.instanceId } : {}), ...(options.deliveryLeaseMs ? { leaseMs: options.deliveryLeaseMs } : {}) });
  const deliveryQueue: DeliveryQueue = options.deliveryQueue ?? ownQueue!;
  // Jobs queued here are news for the other processes' workers, unless the queue tells them itself (BullMQ on
  // PostgreSQL NOTIFYs in its add's transaction: a wake-up of ours was a second NOTIFY for each).
  const announceJobs = deliveryQueue.onQueuedJobs ? () => undefined : () => wakeOthers?.announce("jobs");
  // A shared queue: an append's deliveries go onto it from the process that appended them (the relay is the fallback).
  const queueHandOff = deliveryQueue.settlesInStore
    ? null
    : new QueueHandOff({
        store,
        queue: deliveryQueue,
        logger,
        claimer: options.instanceId ?? null,
        leaseMs: relayLeaseMs(options.deliveryLeaseMs),
        onQueued: () => {
          worker?.wake();
          announceJobs();
        },
        onLeftInStore: onAppended,
        onDueAt: (at) => relay?.dueAt(at),
      });
  // Otherwise deliveries an append records go straight to the worker, claimed for this process: no claim to go through.
  const handOff = queueHandOff ?? { claimFor: () => worker?.claimFor() ?? null, take: (claimed: ClaimedDelivery[]) => worker?.take(claimed), dueAt: (at: number) => worker?.dueAt(at) };
  // With a shared queue, the deliveries a gate admits when a run here ends are run here too, as the store's rows
  // (DeliveryWorker.takeAdmitted; leased like the hand-off's, renewed while held): a one-at-a-time line skips the
  // shared queue's round trips. Appends' deliveries still go onto the shared queue, for any worker.
  const admittedRows = queueHandOff
    ? new LocalJobQueue({ store, hub, nextTickAfter, logger, leaseMs: relayLeaseMs(options.deliveryLeaseMs), ...(options.instanceId ? { claimer: options.instanceId } : {}) })
    : null;
  const admissions: DeliveryHandOff = queueHandOff
    ? {
        claimFor: () => queueHandOff.claimFor(),
        take: (rows) => void (worker?.takeAdmitted(rows) || queueHandOff.take(rows)),
        takeBeforeCommit: (rows) => worker?.takeAdmitted(rows) ?? false,
        dueAt: (at) => queueHandOff.dueAt(at),
      }
    : handOff;
  const lateFaults = new LateFaults({ store, hub, logger });
  sandbox.onLateFault((fault) => void lateFaults.report(fault));
  const dataStores = new DataStoresService({ store, logger });
  const invoker = new SourceInvoker({ store, sandbox, loader, hub, secrets, logger, endpointUrl, limits, onAppended, handOff, lateFaults, dataStores, accountAuth, ...(options.metrics ? { metrics: options.metrics } : {}) });
  const scheduler = new TimerScheduler({ store, invoker, logger });
  // Keys resolve through the registry (the owner's own, then Runnel's catalog); it is made below, and only called later.
  const resolvePublished = (ownerId: string, key: string, version?: string) => componentRegistry.findSaved(ownerId, key, version);
  // With a shared queue its job schedulers are the only timers: the TimerScheduler is never started then.
  const queueTimers = options.sharedTimers ? new QueueTimers({ store, invoker, queue: options.sharedTimers, logger }) : null;
  const onTimersChanged = async (source: { id: string; ownerId: string }) => {
    if (!queueTimers) {
      scheduler.wake();
      wakeOthers?.announce("timers");
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      // Bounded: a Redis client holds commands for ever while it reconnects, and the caller waits on this.
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${TIMER_SYNC_TIMEOUT_MS / 1000} s`)), TIMER_SYNC_TIMEOUT_MS);
      });
      await Promise.race([queueTimers.sync(source.ownerId, source.id), timedOut]);
    } catch (error) {
      // The change itself stands (it is stored): the next start of a process puts the queue's schedule right.
      logger.error({ err: error, sourceId: source.id }, "timers: the job queue did not take this source's new schedule; it will at the next start of a Runnel process");
    } finally {
      clearTimeout(timer);
    }
  };
  const lifecycle = new SourceLifecycle({ store, loader, invoker, hub, secrets, ceilings: limits, onTimersChanged, onSourceChanged: async (sourceId) => {
      worker?.forget(sourceId);
      await changesAcross?.announce("source", sourceId);
    }, accountAuth, resolvePublished });
  const responses = new WorkflowResponses();
  const awaited = new AwaitedResponses({ store, responses, timeoutMs: limits.httpTimeoutMs });
  const admission = new EndpointAdmission(options.pendingRequests);
  // An api process runs no sources' runs of its own but HTTP ones: "run now" goes to a worker, as the issue's roles say.
  const manualRuns = across ? new ManualRunsOnWorkers({ store, transport: across, logger, onAppended, waitMs: (source) => manualRunWaitMs(limits, source) }) : null;
  const runOnWorker = role === "api" && manualRuns ? { runOnWorker: (source: DeployedSource, event: unknown) => manualRuns.run(source, event) } : {};
  const sources = new SourcesService({ ...runOnWorker, store, loader, invoker, lifecycle, hub, secrets, admission, awaitWorkflow: (source, event) => awaited.await(source, event), respondingWorkflows: (source) => awaited.respondingWorkflows(source) });
  const componentRegistry = new RegistryService({ store, loader, logger });
  const mailer = options.mailer ?? null;
  const builtins = builtinActions({
    claimDailyNotice: (ownerId, workflowId, code, day) => store.claimDailyNotice(ownerId, workflowId, code, day),
    sendMail: async (mail) => {
      if (!mailer) throw new Error("This server has no mail room; the error could not be mailed.");
      return mailer.sendToOwner({ ...mail, kind: "error-notification" });
    },
    baseUrl: () => baseUrl,
    findWorkflow: (ownerId, workflowId) => store.findWorkflow(ownerId, workflowId),
  });
  const destinations = createDestinations({ hub, mailer, objectsDir: join(options.dataDir, "objects"), egressPolicy });
  const sender = new SendOutboxWorker({ store, destinations, hub, logger, retry: options.sendRetry ?? DEFAULT_SEND_RETRY, claimer: options.instanceId, onAppended });
  const envVars = new EnvVarsService({ store, secrets });
  const executor = new RunExecutor({ handOff: admissions, onAdmittedPending: onAppended, deliveriesInStore: deliveryQueue.settlesInStore, store, sandbox, loader, bundleFiles, hub, responses, builtins, onSendsEnqueued: () => sender.wake(), logger, limits, secrets, envVars, lateFaults, dataStores, accountAuth, maxInterruptions: options.maxRunInterruptions ?? DEFAULT_MAX_RUN_INTERRUPTIONS, claimer: options.instanceId, baseUrl: () => baseUrl, ...(options.metrics ? { metrics: options.metrics } : {}) });
  const runControl = new RunControl({
    store,
    queue: deliveryQueue,
    executor,
    across: across ?? null,
    logger,
    onHurried: () => {
      worker?.wake();
      announceJobs();
    },
  });
  const listeners = {
    dc_: new SourceListener({ store, invoker, ...(manualRuns ? { reportManualRun: (requestId: string, outcome: SourceRunOutcome) => manualRuns.report(requestId, outcome) } : {}) }),
    wh_: new WebhookSender({ store, secrets, egressPolicy, retry: options.webhookRetry ?? DEFAULT_WEBHOOK_RETRY, logger }),
  };
  if (!deliveryQueue.settlesInStore) {
    relay = new DeliveryRelay({
      store,
      queue: deliveryQueue,
      logger,
      claimer: options.instanceId,
      leaseMs: relayLeaseMs(options.deliveryLeaseMs),
      // The jobs are in the shared queue: this process's worker and the other processes' claim them now.
      onRelayed: () => {
        worker?.wake();
        announceJobs();
      },
    });
  }
  worker = new DeliveryWorker({ onGateAdmitted: onAppended, queue: deliveryQueue, ...(admittedRows ? { rowQueue: admittedRows } : {}), store, executor, logger, listeners, ...(options.instanceId ? { claimer: options.instanceId } : {}), ...(options.deliveryLeaseMs ? { leaseMs: options.deliveryLeaseMs } : {}) });
  const forgetWorkflow = (workflowId: string) => {
    worker?.forget(workflowId);
    executor.forget(workflowId);
    awaited.clear();
  };
  const changed = async (workflowId: string) => {
    forgetWorkflow(workflowId);
    await changesAcross?.announce("workflow", workflowId);
  };
  // What another process changed: the same caches as a change made here (see ChangesAcrossProcesses).
  const forgetChanged = {
    workflow: forgetWorkflow,
    source: (sourceId: string) => {
      invoker.forget(sourceId);
      sources.forgetEndpoints();
      worker?.forget(sourceId);
    },
  };
  const workflows = new WorkflowsService({
    store,
    sources,
    loader,
    hub,
    secrets,
    accountAuth,
    resolveAction: (ownerId, key) => componentRegistry.resolve(ownerId, key),
    onChanged: changed,
    onEnqueued: onAppended,
    followers: runControl,
  });
  const subscriptions = new SubscriptionsService({ store });
  const webhooks = new WebhooksService({ store, secrets, egressPolicy });

  const accounts = new Accounts({ store, singleUserReason: options.singleUserReason ?? null });
  const disconnects: Array<() => Promise<void>> = [];
  return {
    accounts,
    sessions: new Sessions({ store, accounts }),
    sources,
    registry: componentRegistry,
    scheduler,
    workflows,
    runControl,
    subscriptions,
    webhooks,
    dataStores,
    envVars,
    apps,
    appAccounts,
    worker,
    relay,
    sender,
    mailer,
    setBaseUrl(url) {
      baseUrl = url.replace(/\/+$/, "");
    },
    baseUrl: () => baseUrl,
    endpointUrl,
    async connect() {
      if (!across || !wakeOthers || !changesAcross) return;
      if (queueHandOff && options.instanceId) {
        // Rows this instance's previous life held between its appends' commit and their enqueue: the relay takes them now, not after their lease.
        const held = await store.requeueDeliveries(Date.now(), options.instanceId);
        if (held > 0) logger.info({ deliveries: held }, "deliveries the last stop left unqueued are queued again");
      }
      // Every role keeps rows of workflows and sources for a second: every role hears of their changes.
      disconnects.push(await changesAcross.listen(forgetChanged));
      // A worker holds no HTTP callers: it sends answers and listens to none. An api process runs no workers: no wake-ups.
      disconnects.push(await carryAnswersAcross(responses, across, logger, role !== "worker"));
      if (role !== "worker" && manualRuns) disconnects.push(await manualRuns.listen());
      // Runs run in workers (and in an "all" process): they hear of cancels of their running runs.
      if (role !== "api") disconnects.push(await runControl.listen());
      if (role !== "api") {
        disconnects.push(
          await wakeOthers.listen({
            deliveries: () => {
              worker?.wake();
              relay?.wake();
            },
            jobs: () => worker?.wake(),
            timers: () => scheduler.wake(),
          }),
        );
        if (deliveryQueue.onQueuedJobs) disconnects.push(await deliveryQueue.onQueuedJobs(() => worker?.wake()));
      }
    },
    async startTimers({ runTicks }) {
      if (!queueTimers) {
        if (runTicks) scheduler.start();
        return;
      }
      try {
        const { changed } = await queueTimers.reconcile();
        if (changed > 0) logger.info({ changed }, "timers: put the job queue's schedules in line with the timer sources");
      } catch (error) {
        logger.error({ err: error }, "timers: could not compare the job queue's schedules with the timer sources; those already scheduled tick as before");
      }
      if (runTicks) await queueTimers.runTicks();
    },
    async stop() {
      for (const disconnect of disconnects.splice(0)) await disconnect().catch(() => undefined);
      await scheduler.stop();
      await queueTimers?.stop();
      await invoker.drain();
      await queueHandOff?.stop();
      await relay?.stop();
      await worker?.stop();
      // After the runs: the last of them may have put sends in the outbox; those not carried out wait for the next start.
      await sender.stop();
      // The queue made here stops renewing its claims.
      await ownQueue?.close();
      await admittedRows?.close();
    },
  };
}

/**
 * How long an api process waits for a worker to run a source's "run now":
 * the time its run may take, and a margin for the queue and the commit.
 */
function manualRunWaitMs(limits: RunLimits, source: DeployedSource): number {
  return limitsByTrigger(limits, source.limits)("manual").timeoutMs + 15_000;
}
