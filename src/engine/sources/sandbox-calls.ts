/**
 * Runs a source's calls in the sandbox, sent to one runner together, each
 * over the store the last one left; then checks what each call emitted and
 * orders it. A timer source without run emits its tick without the sandbox.
 */
import type { PendingEmit } from "../../domain/dedupe.js";
import { orderEmits, validateEmitMeta } from "../../domain/emit-order.js";
import type { DeployedSource } from "../../domain/sources.js";
import type { DeliveryKey } from "../../domain/subscriptions.js";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { ComponentCall } from "../../sandbox/protocol.js";
import { addParsedBody } from "../../sandbox/runner/http-body.js";
import type { InvokeCallbacks, InvokeResult, Sandbox } from "../../sandbox/sandbox.js";
import type { ComponentLoader } from "../component-loader.js";
import type { DataStoresService } from "../data-stores/data-stores-service.js";
import type { AccountAuth } from "../apps/account-auth.js";
import type { LateFaults } from "../late-faults.js";
import type { SecretBox } from "../secrets.js";
import { runtimeProps } from "./props.js";
import { DEFAULT_RUN_LIMITS, limitsByTrigger, type RunLimits, type Trigger } from "./run-limits.js";
import type { SourceComponent } from "./source-cache.js";
import { copyOwn } from "../../domain/own-copy.js";

export interface CallOutcome {
  result: InvokeResult;
  /** Emits that passed their metadata checks, ordered by ts. */
  emits: PendingEmit[];
  /** Problems found with the call's emits, to log. */
  problems: string[];
  /** The delivery the call carries out (an event the source listens to), removed when the call commits. */
  delivery?: DeliveryKey | undefined;
  /** Listeners whose deliveries of the call's one event are handed over without a row (EventBatch.held). */
  holdFor?: readonly string[] | undefined;
  /** What started the call (metrics count runs by it). */
  trigger?: Trigger | undefined;
  /** The shared queue's timer tick the call runs (EventBatch.ticks). */
  tickDueAt?: number | undefined;
}

/** What a call carries out beside running: who takes its response, and what its commit settles. */
export interface CallCarries {
  onRespond?: ((response: HttpResponse) => void) | undefined;
  /** The delivery the call carries out, when it runs an event the source listens to. */
  delivery?: DeliveryKey | undefined;
  /** Listeners whose deliveries of the call's event need no row: its caller waits for their runs (only a call without run, whose event is the request). */
  holdFor?: readonly string[] | undefined;
  /** The shared queue's timer tick the call runs (its due time): recorded with its events, so that it runs once. */
  tickDueAt?: number | undefined;
}

/** A call to run: what it asks, what started it, and what it carries out beside. */
export interface CallRequest extends CallCarries {
  call: ComponentCall;
  trigger: Trigger;
}

export interface SandboxCallsOptions {
  sandbox: Sandbox;
  loader: ComponentLoader;
  secrets: SecretBox;
  endpointUrl: (source: DeployedSource) => string | null;
  /** Told which source runs which bundle, so that a fault after a call reaches the source's logs. */
  lateFaults?: LateFaults;
  limits?: RunLimits;
  /** Carries out `data_store` props' calls; without it they fail. */
  dataStores?: DataStoresService;
  /** Gives app props their account's `$auth`; without it they get an empty one. */
  accountAuth?: AccountAuth;
}

/**
 * Runs calls one after the other over one store, sent to the runner
 * together; a timer source without run emits its tick without the sandbox.
 */
export async function runCalls(
  options: SandboxCallsOptions,
  source: DeployedSource,
  component: SourceComponent,
  calls: CallRequest[],
  db: Record<string, unknown>,
): Promise<CallOutcome[]> {
  const plainSchedule = (call: ComponentCall) => call.kind === "run" && !component.validated.hasRun;
  const runtime = runtimeProps(component.validated, source, options.secrets, options.endpointUrl(source));
  const { dbProps, dataStores } = runtime;
  // Read at the start of each batch: a token refreshed or an account reconnected since the last one is seen.
  const props = options.accountAuth ? await options.accountAuth.resolveProps(source.ownerId, component.validated, runtime.props) : withoutAccounts(component, runtime.props);
  const onDataStore = dataStores.length > 0 ? options.dataStores?.handlerFor(source.ownerId, dataStores) : undefined;
  const accounts = options.accountAuth?.accountIdsOf(component.validated, runtime.props) ?? [];
  const onAuth = accounts.length > 0 ? options.accountAuth?.refreshHandler(source.ownerId, accounts) : undefined;
  const bundle = await options.loader.runnerBundle(component.saved);
  options.lateFaults?.remember(source.ownerId, bundle.id, source.id);
  const limitsFor = limitsByTrigger(options.limits ?? DEFAULT_RUN_LIMITS, source.limits);
  const toSandbox = calls.filter((pending) => !plainSchedule(pending.call));
  const results = await options.sandbox.invokeBatch(
    toSandbox.map((pending) => ({ bundle, call: pending.call, props, dbProps, db, limits: limitsFor(pending.trigger) })),
    toSandbox.map((pending) => callbacksOf(pending.onRespond, onDataStore, onAuth)),
  );
  let next = 0;
  return calls.map((pending): CallOutcome => {
    // What the call's commit settles besides its events: its delivery, its tick.
    // Built field by field, not spread: every call (see domain/own-copy.ts).
    const settles: Pick<CallOutcome, "trigger" | "delivery" | "tickDueAt"> = { trigger: pending.trigger };
    if (pending.delivery) settles.delivery = pending.delivery;
    if (pending.tickDueAt !== undefined) settles.tickDueAt = pending.tickDueAt;
    if (plainSchedule(pending.call)) {
      // A plain schedule: a timer source without run emits the timer event (or the HTTP request) itself.
      const call = pending.call as Extract<ComponentCall, { kind: "run" }>;
      const event = call.httpBody ? addParsedBody(call.event) : call.event;
      const plain: CallOutcome = Object.assign({ result: { ok: true, emits: [], db: null, logs: [], durationMs: 0 }, emits: [{ event }], problems: [] }, settles);
      if (pending.holdFor) plain.holdFor = pending.holdFor;
      return plain;
    }
    return Object.assign(checkEmits(results[next++]!), settles);
  });
}

/** What the runner calls back during a call, if anything: built field by field, not spread (see domain/own-copy.ts). */
function callbacksOf(onRespond: InvokeCallbacks["onRespond"], onDataStore: InvokeCallbacks["onDataStore"], onAuth: InvokeCallbacks["onAuth"]): InvokeCallbacks | undefined {
  if (!onRespond && !onDataStore && !onAuth) return undefined;
  const callbacks: InvokeCallbacks = {};
  if (onRespond) callbacks.onRespond = onRespond;
  if (onDataStore) callbacks.onDataStore = onDataStore;
  if (onAuth) callbacks.onAuth = onAuth;
  return callbacks;
}

/** An emit as the store takes it: the event and its (checked) metadata. */
function pendingEmit({ event, meta }: InvokeResult["emits"][number]): PendingEmit {
  const pending: PendingEmit = { event };
  if (meta.id !== undefined) pending.id = meta.id;
  if (meta.name !== undefined) pending.name = meta.name;
  if (meta.summary !== undefined) pending.summary = meta.summary;
  if (meta.ts !== undefined) pending.ts = meta.ts;
  return pending;
}

/** Checks the metadata of a call's emits and orders them by ts; what fails the checks is logged, not emitted. */
function checkEmits(result: InvokeResult): CallOutcome {
  const problems: string[] = [];
  const checked: PendingEmit[] = [];
  for (const emit of result.emits) {
    const problem = validateEmitMeta(emit.meta);
    if (problem) problems.push(`An event was not emitted: ${problem}`);
    else checked.push(pendingEmit(emit));
  }
  return { result, emits: orderEmits(checked), problems };
}

/** Without accounts to read, app props get an empty `$auth` (never the account's id). */
function withoutAccounts(component: SourceComponent, props: Record<string, unknown>): Record<string, unknown> {
  // copyOwn, not a spread: once a batch (see domain/own-copy.ts); prop names are the component's.
  const out = copyOwn(props);
  for (const prop of component.validated.props) if (prop.baseType === "app") out[prop.name] = { $auth: {} };
  return out;
}
