import type { TriggerInput } from "../../domain/workflow-rules.js";
import type { DeployedSource } from "../../domain/sources.js";
import type { TriggerKind } from "../../domain/workflows.js";
import type { SourcesService } from "../sources/service.js";
import type { DeployInput } from "../sources/lifecycle.js";

/**
 * An inline HTTP trigger: a plain endpoint (no run: each request is the
 * event, without a trip to the sandbox). With `customResponse` the endpoint
 * does not answer by itself: the workflow's `$.respond` does.
 */
function httpTriggerCode(customResponse: boolean): string {
  return `module.exports = {
  name: "HTTP trigger",
  version: "1.0.0",
  description: "Each request to the endpoint is an event of its workflow.",
  props: { http: { type: "$.interface.http", customResponse: ${customResponse} } },
};
`;
}

/** An inline timer trigger: a plain schedule (no run: each tick is the event). */
const TIMER_TRIGGER_CODE = `module.exports = {
  name: "Timer trigger",
  version: "1.0.0",
  description: "Each tick is an event of its workflow.",
  props: { timer: { type: "$.interface.timer" } },
};
`;

/** What a trigger input deploys: the source's code and props; null for a trigger that is an existing source or none. */
export function triggerDeployInput(trigger: TriggerInput, workflowName: string, respondsItself: boolean): DeployInput | null {
  const name = `${workflowName} trigger`;
  switch (trigger.kind) {
    case "http":
      return { component_code: httpTriggerCode(respondsItself), name };
    case "timer":
      return {
        component_code: TIMER_TRIGGER_CODE,
        name,
        configured_props: { timer: "cron" in trigger ? { cron: trigger.cron, ...(trigger.timezone !== undefined ? { timezone: trigger.timezone } : {}) } : { intervalSeconds: trigger.intervalSeconds } },
      };
    case "component":
      return {
        ...(trigger.code !== undefined ? { component_code: trigger.code } : {}),
        ...(trigger.url !== undefined ? { component_url: trigger.url } : {}),
        ...(trigger.key !== undefined ? { key: trigger.key } : {}),
        configured_props: trigger.configuredProps,
        name,
      };
    default:
      return null;
  }
}

export interface ResolvedTrigger {
  kind: TriggerKind;
  sourceId: string | null;
  owned: boolean;
  /** Created by this change: removed again if the change fails. */
  created: DeployedSource | null;
}

/**
 * Puts the trigger in place: an existing source is checked to be the owner's;
 * an inline one is deployed, or, when the workflow already owns one, updated
 * in place, so that its id and HTTP endpoint stay the same across updates.
 */
export async function placeTrigger(
  sources: SourcesService,
  ownerId: string,
  trigger: TriggerInput,
  context: { workflowName: string; respondsItself: boolean; ownedSourceId: string | null },
): Promise<ResolvedTrigger> {
  if (trigger.kind === "none") return { kind: "none", sourceId: null, owned: false, created: null };
  if (trigger.kind === "source") {
    const source = await sources.get(ownerId, trigger.sourceId);
    return { kind: "source", sourceId: source.id, owned: false, created: null };
  }
  const input = triggerDeployInput(trigger, context.workflowName, context.respondsItself)!;
  if (context.ownedSourceId) {
    // The trigger's props replace the old ones (none for HTTP): kept, a timer's props would be refused by the HTTP code that replaces it.
    const updated = await sources.update(ownerId, context.ownedSourceId, { ...input, configured_props: input.configured_props ?? {}, name: undefined });
    return { kind: trigger.kind, sourceId: updated.id, owned: true, created: null };
  }
  const created = await sources.deploy(ownerId, input);
  return { kind: trigger.kind, sourceId: created.id, owned: true, created };
}
