import { randomBytes } from "node:crypto";
import type { ValidatedComponent } from "../../domain/component-rules.js";
import { validateConfiguredProps } from "../../domain/configured-props.js";
import { HookFailedError, NotFoundError, ValidationError } from "../../domain/errors.js";
import { newId } from "../../domain/ids.js";
import { slugify, uniqueSlug } from "../../domain/slug.js";
import { DEFAULT_EVENT_RETENTION, type DeployedSource, type SavedComponent, type SourceLimits } from "../../domain/sources.js";
import type { Store } from "../../store/store.js";
import type { ComponentInput, ComponentLoader } from "../component-loader.js";
import type { EventHub } from "../event-hub.js";
import { storeUnderFreeSlug } from "../free-slug.js";
import type { SecretBox } from "../secrets.js";
import { DEFAULT_RUN_LIMITS, describeError, type CallOutcome, type RunLimits, type SourceInvoker } from "./invoker.js";
import type { AccountAuth } from "../apps/account-auth.js";
import { openSecrets, sealSecrets, withKeptSecrets } from "./props.js";
import { assertValidCron, firstTick, toTimerSchedule } from "./timer-schedule.js";

export interface DeployInput extends ComponentInput {
  component_id?: string | undefined;
  key?: string | undefined;
  name?: string | undefined;
  configured_props?: Record<string, unknown> | undefined;
  retention?: number | undefined;
  /** The source's own time limit per run and heap, over the server's defaults. */
  timeout_seconds?: number | null | undefined;
  memory_mb?: number | null | undefined;
}

export interface UpdateInput extends DeployInput {
  active?: boolean | undefined;
}

/** A component to deploy, named as the deploy form has it: a published key (optionally a version), or a saved component's id. */
export type ComponentRef = { key: string; version?: string | undefined } | { id: string };

type Component = { saved: SavedComponent; validated: ValidatedComponent };

/**
 * The limits an input sets: a field given (null clears it) replaces the
 * current one. What the admin's ceilings do not allow is refused, naming
 * the ceiling and the setting that raises it.
 */
function limitsOf(input: DeployInput, current: SourceLimits | null, ceilings: Pick<RunLimits, "maxMemoryMb" | "maxTimeoutMs">): SourceLimits | null {
  const timeoutSeconds = input.timeout_seconds !== undefined ? input.timeout_seconds : (current?.timeoutSeconds ?? null);
  const memoryMb = input.memory_mb !== undefined ? input.memory_mb : (current?.memoryMb ?? null);
  if (input.memory_mb != null && input.memory_mb > ceilings.maxMemoryMb) {
    throw new ValidationError("memory_mb", `memory_mb is ${input.memory_mb}, over this server's ceiling of ${ceilings.maxMemoryMb} MB (RUNNEL_MAX_MEMORY_MB). Ask for less, or ask the admin to raise the ceiling.`);
  }
  const maxSeconds = Math.floor(ceilings.maxTimeoutMs / 1000);
  if (input.timeout_seconds != null && input.timeout_seconds > maxSeconds) {
    throw new ValidationError("timeout_seconds", `timeout_seconds is ${input.timeout_seconds}, over this server's ceiling of ${maxSeconds} s (RUNNEL_MAX_TIMEOUT_SECONDS). Ask for less, or ask the admin to raise the ceiling.`);
  }
  return timeoutSeconds === null && memoryMb === null ? null : { timeoutSeconds, memoryMb };
}
type HookName = "deploy" | "activate" | "deactivate";

/** Hooks that ran: the store they left, and their events and logs to commit once the operation stands. */
interface HookRun {
  db: Record<string, unknown>;
  commit(stored: DeployedSource): Promise<void>;
}

export interface SourceLifecycleOptions {
  store: Store;
  loader: ComponentLoader;
  invoker: SourceInvoker;
  hub: EventHub;
  secrets: SecretBox;
  now?: () => number;
  /** Told whenever a source's timer may have changed (awaited, before the caller is answered): the scheduler looks again. */
  onTimersChanged?: (source: { id: string; ownerId: string }) => void | Promise<void>;
  /** A source was changed or deleted here: the other processes' caches of it go (awaited, before the caller is answered). */
  onSourceChanged?: (sourceId: string) => Promise<void>;
  /** The admin's ceilings on a source's own limits; default DEFAULT_RUN_LIMITS'. */
  ceilings?: Pick<RunLimits, "maxMemoryMb" | "maxTimeoutMs">;
  /** Checks that app props' accounts are the owner's and of the right app. */
  accountAuth?: AccountAuth;
  /**
   * A published key (at a version, or its newest) as one of the owner's saved
   * components, or null when the registry has no such key: the registry
   * (the owner's own keys, then Runnel's catalog). Default: the owner's own.
   */
  resolvePublished?: (ownerId: string, key: string, version?: string) => Promise<SavedComponent | null>;
}

/**
 * Deploy, update and delete, with the hooks run as the seed's state table
 * says: deploy then activate; deactivate, replace, activate; deactivate then
 * delete. A hook that throws fails the operation and leaves the previous state
 * as it was. Operations on one source queue behind its runs.
 */
export class SourceLifecycle {
  private readonly now: () => number;
  private readonly ceilings: Pick<RunLimits, "maxMemoryMb" | "maxTimeoutMs">;

  constructor(private readonly options: SourceLifecycleOptions) {
    this.now = options.now ?? Date.now;
    this.ceilings = options.ceilings ?? DEFAULT_RUN_LIMITS;
  }

  async deploy(ownerId: string, input: DeployInput): Promise<DeployedSource> {
    const component = await this.resolveComponent(ownerId, input, null);
    if (!component) throw new ValidationError("component_code", "Give the source to deploy: component_code, component_url, component_id or key.");
    const at = this.now();
    const draft = this.build(component, input.configured_props ?? {}, {
      id: newId("deployedComponent", at),
      ownerId,
      componentId: component.saved.id,
      name: input.name?.trim() || component.validated.name,
      nameSlug: await this.freeSlug(ownerId, input.name?.trim() || component.validated.name, null),
      active: true,
      endpointToken: null,
      retention: input.retention ?? DEFAULT_EVENT_RETENTION,
      limits: limitsOf(input, null, this.ceilings),
      createdAt: at,
      updatedAt: at,
    });
    await this.options.accountAuth?.checkConfigured(ownerId, component.validated, draft.configuredProps, "configured_props");
    return this.options.invoker.exclusive(draft.id, async () => {
      const hooks = await this.runHooks(draft, component, ["deploy", "activate"], {});
      const source = await storeUnderFreeSlug(draft, (row) => this.options.store.createSource(row, hooks.db), () => this.freeSlug(ownerId, draft.name, null));
      await hooks.commit(source);
      await this.options.onTimersChanged?.(source);
      return source;
    });
  }

  async update(ownerId: string, idOrSlug: string, input: UpdateInput): Promise<DeployedSource> {
    const current = await this.find(ownerId, idOrSlug);
    const updated = await this.options.invoker.exclusive(current.id, async () => {
      const before = await this.options.invoker.componentOf(current);
      const after = (await this.resolveComponent(ownerId, input, before.saved)) ?? before;
      const changesCode = after.saved.id !== before.saved.id;
      const configured = input.configured_props
        ? withKeptSecrets(after.validated, input.configured_props, current.configuredProps, this.options.secrets)
        : changesCode
          ? openSecrets(current.configuredProps, this.options.secrets)
          : null;
      const name = input.name?.trim() || current.name;
      let next: DeployedSource = {
        ...current,
        componentId: after.saved.id,
        name,
        nameSlug: name === current.name ? current.nameSlug : await this.freeSlug(ownerId, name, current.nameSlug),
        active: input.active ?? current.active,
        retention: input.retention ?? current.retention,
        limits: limitsOf(input, current.limits, this.ceilings),
        updatedAt: this.now(),
      };
      next = configured ? this.build(after, configured, next) : this.withTimer(next, after.validated, current.configuredProps, current);
      if (configured) await this.options.accountAuth?.checkConfigured(ownerId, after.validated, next.configuredProps, "configured_props");

      const db = await this.options.store.readSourceDb(ownerId, current.id);
      const onlyActivation = !changesCode && input.configured_props === undefined && input.name === undefined;
      // Hooks: an inactive source was deactivated already; activation alone runs only the hook it needs.
      const deactivate = current.active && (!onlyActivation || !next.active);
      const activate = next.active && (!onlyActivation || !current.active);
      let state = db;
      if (deactivate) {
        const deactivated = await this.runHooks(current, before, ["deactivate"], state);
        await deactivated.commit(current);
        state = deactivated.db;
      }
      let activated: HookRun | null = null;
      if (activate) {
        try {
          activated = await this.runHooks(next, after, ["activate"], state);
        } catch (error) {
          // Put things back as they were: the old code and props, activated again.
          if (deactivate) await this.restore(current, before, state);
          throw error;
        }
      }
      await this.options.store.updateSource(next, activated ? activated.db : state);
      await activated?.commit(next);
      await this.options.onTimersChanged?.(next);
      return next;
    });
    await this.options.onSourceChanged?.(current.id);
    return updated;
  }

  async remove(ownerId: string, idOrSlug: string): Promise<void> {
    const current = await this.find(ownerId, idOrSlug);
    await this.options.invoker.exclusive(current.id, async () => {
      if (current.active) {
        const component = await this.options.invoker.componentOf(current);
        await this.runHooks(current, component, ["deactivate"], await this.options.store.readSourceDb(ownerId, current.id));
      }
      if (!(await this.options.store.deleteSource(ownerId, current.id))) throw new NotFoundError("source", idOrSlug, "id or name");
      this.options.hub.publish(current.id, { kind: "closed", reason: "The source was deleted." });
      await this.options.onTimersChanged?.(current);
    });
    await this.options.onSourceChanged?.(current.id);
  }

  async find(ownerId: string, idOrSlug: string): Promise<DeployedSource> {
    const source = await this.options.store.findSource(ownerId, idOrSlug);
    if (!source) throw new NotFoundError("source", idOrSlug, "id or name");
    return source;
  }

  private async resolveComponent(ownerId: string, input: DeployInput, current: SavedComponent | null): Promise<Component | null> {
    if (input.component_code !== undefined || input.component_url !== undefined) {
      const loaded = await this.options.loader.save(ownerId, input, { previous: current });
      return this.asSource({ saved: loaded.component, validated: loaded.validated });
    }
    const ref = input.component_id ?? input.key;
    if (ref === undefined || ref === current?.id) return null;
    // A key names the newest published version first (the registry), else the newest saved component with that key.
    const published = input.component_id === undefined ? await this.resolvePublished(ownerId, ref) : null;
    const saved = published ?? (await this.options.store.findComponent(ownerId, ref));
    if (!saved) throw new NotFoundError("component", ref);
    return this.asSource({ saved, validated: this.options.loader.validatedOf(saved) });
  }

  /**
   * The component a deploy of `ref` would run, and a source of it that is
   * never stored, carrying `configured` as given (unchecked: a form asks
   * before every prop is filled in): for calls before deploy, such as a
   * prop's async options.
   */
  async draft(ownerId: string, ref: ComponentRef, configured: Record<string, unknown>): Promise<{ source: DeployedSource; component: Component }> {
    const component = this.asSource(await this.findComponentOf(ownerId, ref));
    const at = this.now();
    const source: DeployedSource = {
      id: newId("deployedComponent", at),
      ownerId,
      componentId: component.saved.id,
      name: component.validated.name,
      nameSlug: slugify(component.validated.name),
      active: false,
      endpointToken: null,
      retention: DEFAULT_EVENT_RETENTION,
      limits: null,
      configuredProps: configured,
      timer: null,
      nextTickAt: null,
      createdAt: at,
      updatedAt: at,
    };
    return { source, component };
  }

  private async findComponentOf(ownerId: string, ref: ComponentRef): Promise<Component> {
    if ("id" in ref) {
      const saved = await this.options.store.findComponent(ownerId, ref.id);
      if (!saved) throw new NotFoundError("component", ref.id);
      return { saved, validated: this.options.loader.validatedOf(saved) };
    }
    const published = await this.resolvePublished(ownerId, ref.key, ref.version);
    if (!published && ref.version !== undefined) throw new NotFoundError("published component", `${ref.key}@${ref.version}`);
    const saved = published ?? (await this.options.store.findComponent(ownerId, ref.key));
    if (!saved) throw new NotFoundError("component", ref.key);
    return { saved, validated: this.options.loader.validatedOf(saved) };
  }

  private async resolvePublished(ownerId: string, key: string, version?: string): Promise<SavedComponent | null> {
    if (this.options.resolvePublished) return this.options.resolvePublished(ownerId, key, version);
    const published = await this.options.store.findPublished(ownerId, key, version);
    return published ? this.options.store.findComponent(ownerId, published.componentId) : null;
  }

  private asSource(component: Component): Component {
    if (component.validated.kind !== "source") {
      throw new ValidationError("type", `"${component.validated.name}" is an action; only sources can be deployed. Use actions as workflow steps.`);
    }
    return component;
  }

  /** Validated, encrypted props and the timer they configure, on top of `base`. */
  private build(component: Component, configured: Record<string, unknown>, base: Omit<DeployedSource, "configuredProps" | "timer" | "nextTickAt">): DeployedSource {
    const values = validateConfiguredProps(component.validated, configured);
    const configuredProps = sealSecrets(component.validated, values, this.options.secrets);
    const hasHttp = component.validated.props.some((prop) => prop.baseType === "$.interface.http");
    const endpointToken = hasHttp ? (base.endpointToken ?? randomBytes(18).toString("base64url")) : null;
    return this.withTimer({ ...base, configuredProps, endpointToken, timer: null, nextTickAt: null }, component.validated, configuredProps, null);
  }

  private withTimer(source: DeployedSource, component: ValidatedComponent, values: Record<string, unknown>, previous: DeployedSource | null): DeployedSource {
    const timerProp = component.props.find((prop) => prop.baseType === "$.interface.timer");
    const timer = timerProp ? toTimerSchedule(values[timerProp.name]) : null;
    if (timer?.cron) assertValidCron(timer.cron, `configured_props.${timerProp!.name}`);
    const unchanged = previous?.active && source.active && JSON.stringify(previous.timer) === JSON.stringify(timer);
    const nextTickAt = !timer || !source.active ? null : unchanged ? previous!.nextTickAt : firstTick(timer, this.now());
    return { ...source, timer, nextTickAt };
  }

  /** A free slug for `name`; the source's own slug (`ownSlug`, on a rename) counts as free. */
  private async freeSlug(ownerId: string, name: string, ownSlug: string | null): Promise<string> {
    const base = slugify(name);
    const taken = await this.options.store.takenSlugs(ownerId, base);
    if (ownSlug) taken.delete(ownSlug);
    return uniqueSlug(base, taken);
  }

  /**
   * Runs hooks in order over one key-value store, stopping at the first that
   * throws. What they emitted and logged is committed by the caller once the
   * operation stands (`commit`), or at once (`commitNow`).
   */
  private async runHooks(source: DeployedSource, component: Component, hooks: HookName[], db: Record<string, unknown>): Promise<HookRun> {
    const outcomes: CallOutcome[] = [];
    let state = db;
    for (const hook of hooks) {
      if (!component.validated.hooks.includes(hook)) continue;
      const outcome = await this.options.invoker.call(source, component, { kind: "hook", hook }, "hook", state);
      if (!outcome.result.ok) {
        const error = outcome.result.error!;
        throw new HookFailedError(hook, error.message, { error: { code: error.code, name: error.name, message: error.message, stack: describeError(error) } });
      }
      if (outcome.result.db) state = outcome.result.db;
      outcomes.push(outcome);
    }
    return {
      db: state,
      commit: async (stored: DeployedSource) => {
        for (const outcome of outcomes) await this.options.invoker.commit(stored, { ...outcome, result: { ...outcome.result, db: null } }, component.validated.dedupe);
      },
    };
  }

  /** After a failed update: the old code activated again over the store its deactivate hook left. */
  private async restore(source: DeployedSource, component: Component, db: Record<string, unknown>): Promise<void> {
    try {
      const reactivated = await this.runHooks(source, component, ["activate"], db);
      await this.options.store.updateSource(source, reactivated.db);
      await reactivated.commit(source);
    } catch {
      // The old activate hook fails too: keep the old row as it was; its logs say why.
      await this.options.store.updateSource(source, db);
    }
  }
}
