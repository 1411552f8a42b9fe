/**
 * Work a call left behind (a timer, a promise nobody awaited) that fails
 * after the call ended costs its runner, which is replaced; this tells the
 * owner, in the logs of the sources or workflow that ran that code, so the
 * fault is not a silent line of the server's own log.
 *
 * The sandbox knows only the runner's bundle; which of the owner's sources
 * or workflows run that bundle is remembered here as they run it.
 */
import type { Logger } from "pino";
import type { LateFault } from "../sandbox/sandbox.js";
import type { Store } from "../store/store.js";
import type { EventHub } from "./event-hub.js";
import { describeError } from "./sources/invoker.js";

/** Bundles remembered at most; the oldest go first (a bundle not run for long has no runner left to fault). */
const MAX_BUNDLES = 10_000;

export class LateFaults {
  private readonly emitters = new Map<string, Set<string>>();

  constructor(private readonly options: { store: Store; hub: EventHub; logger: Logger; now?: () => number }) {}

  /** `emitterId` (a source or a workflow) of `ownerId` runs the code of `bundleId`. */
  remember(ownerId: string, bundleId: string, emitterId: string): void {
    const key = `${ownerId} ${bundleId}`;
    const known = this.emitters.get(key);
    if (known) {
      known.add(emitterId);
      return;
    }
    if (this.emitters.size >= MAX_BUNDLES) this.emitters.delete(this.emitters.keys().next().value!);
    this.emitters.set(key, new Set([emitterId]));
  }

  /** Writes the fault into the logs of what runs that bundle; never throws. */
  async report(fault: LateFault): Promise<void> {
    const emitters = this.emitters.get(`${fault.ownerId} ${fault.bundleId}`);
    if (!emitters) return this.options.logger.info({ ownerId: fault.ownerId, error: fault.error }, "a runner failed between calls, and nothing known runs its code");
    const text = `Work that a call left running failed after the call ended, so the code's runner was replaced: ${describeError(fault.error)}. Await everything run() starts (timers, promises) before it returns.`;
    const at = (this.options.now ?? Date.now)();
    for (const emitterId of emitters) {
      try {
        const logs = await this.options.store.appendLogs(fault.ownerId, emitterId, [{ stream: "stderr", text, ts: at }]);
        for (const item of logs) this.options.hub.publish(emitterId, { kind: "log", item });
      } catch (error) {
        this.options.logger.warn({ err: error, emitterId }, "could not log a late fault for its owner");
      }
    }
  }
}
