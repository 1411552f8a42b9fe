import type { DeployedSource, StoredEvent } from "../../domain/sources.js";
import type { Store } from "../../store/store.js";
import { ExpiringCache } from "../expiring-cache.js";
import type { WorkflowEnd } from "../sources/service.js";
import type { WorkflowResponses } from "./workflow-responses.js";

/**
 * Whether a source's events trigger a workflow that responds itself, and if
 * so the wait for that workflow's answer. What each source triggers is
 * remembered for a second (cleared at once by changes made here).
 */
export class AwaitedResponses {
  private readonly responding = new ExpiringCache<string, boolean>({ ttlMs: 1_000, maxEntries: 10_000 });

  constructor(private readonly options: { store: Store; responses: WorkflowResponses; timeoutMs: number }) {}

  async await(source: DeployedSource, event: StoredEvent): Promise<WorkflowEnd | null> {
    let responds = this.responding.get(source.id);
    if (responds === undefined) {
      const workflows = await this.options.store.workflowsTriggeredBy(source.ownerId, source.id);
      responds = this.responding.set(source.id, workflows.some((workflow) => workflow.active && workflow.respond === "workflow"));
    }
    if (!responds) return null;
    const end = await this.options.responses.wait(source.id, event.id, this.options.timeoutMs);
    return end ?? { kind: "timeout", seconds: Math.round(this.options.timeoutMs / 1000) };
  }

  /** A workflow changed: what sources trigger is read again. */
  clear(): void {
    this.responding.clear();
  }
}
