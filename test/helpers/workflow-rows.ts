import { newId } from "../../src/domain/ids.js";
import type { Workflow } from "../../src/domain/workflows.js";

/** A workflow row as the store takes it, with one built-in step and no trigger, for store-level tests. */
export function workflowFor(ownerId: string, slug: string, overrides: Partial<Workflow> = {}): Workflow {
  const at = Date.now();
  return {
    id: newId("workflow", at),
    ownerId,
    name: slug,
    nameSlug: slug,
    active: true,
    triggerSourceId: null,
    triggerOwned: false,
    triggerKind: "none",
    steps: [{ id: newId("cell", at), name: "a", componentId: null, key: "$runnel/error-mail", props: { x: "{{steps.trigger.event}}" } }],
    respond: "immediately",
    settings: { errorNotifications: true, errorRetention: 100 },
    isErrorWorkflow: false,
    deploymentId: newId("deployment", at),
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}
