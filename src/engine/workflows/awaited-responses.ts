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
  /** By source: the active workflows it triggers that respond themselves. */
  private readonly responding = new ExpiringCache<string, readonly string[]>({ ttlMs: 1_000, maxEntries: 10_000 });

  constructor(private readonly options: { store: Store; responses: WorkflowResponses; timeoutMs: number }) {}

  async await(source: DeployedSource, event: StoredEvent): Promise<WorkflowEnd | null> {
    const responders = await this.respondingWorkflows(source);
    if (responders.length === 0) return null;
    const end = await this.options.responses.wait(source.id, event.id, this.options.timeoutMs);
    return end ?? { kind: "timeout", seconds: Math.round(this.options.timeoutMs / 1000) };
  }

  /**
   * The active workflows whose runs answer the source's HTTP callers; at once
   * (no promise) when read within the last second. Their deliveries of a
   * caller's event need no row: the caller is answered only once the run, or
   * its delivery, is recorded (EventBatch.held).
   */
  respondingWorkflows(source: DeployedSource): readonly string[] | Promise<readonly string[]> {
    return this.responding.get(source.id) ?? this.read(source);
  }

  private async read(source: DeployedSource): Promise<readonly string[]> {
    return this.responding.readThrough(source.id, async () => {
      const workflows = await this.options.store.workflowsTriggeredBy(source.ownerId, source.id);
      return workflows.filter((workflow) => workflow.active && workflow.respond === "workflow").map((workflow) => workflow.id);
    });
  }

  /** A workflow changed, here or in another process: what sources trigger is read again. */
  clear(): void {
    this.responding.clear();
  }
}
