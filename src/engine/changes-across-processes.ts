import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { LiveTransport } from "./event-hub.js";

/** The live channel of "changed" messages. Emitter ids never start with `$`, so it is nobody's stream. */
export const CHANGED_CHANNEL = "$runnel:changed";

/** What changed: a workflow (its steps, props, activity) or a source (its code, props, activity, or it went). */
export type ChangedKind = "workflow" | "source";

/** How long `announce` waits for its own message to come back before it lets the caller be answered anyway. */
const ECHO_WAIT_MS = 250;

/**
 * Invalidation of the caches that must agree between processes. Each
 * process keeps, for a second, the workflow and source rows its hot paths
 * read (DeliveryWorker, SourceCache, an api's endpoints, AwaitedResponses);
 * a change made through one process clears its own at once, and this
 * message clears the others'.
 *
 * The change is announced before the request that made it is answered, and
 * `announce` waits for its own message to come back over the wire: Redis
 * and PostgreSQL send a message to every subscriber at once, so by then the
 * other processes have it too, and what the caller does next (a request to
 * another api process, an event a worker runs) finds their caches cleared,
 * or, when such a process is busy, cleared a moment later (it reads the
 * message after the request that arrived with it: a CI run caught one).
 * A message that cannot be sent is logged: the other processes then see the
 * change within their caches' second.
 */
export class ChangesAcrossProcesses {
  /** Announcements of this process waiting for their echo, by nonce. */
  private readonly echoes = new Map<string, () => void>();
  private listening = false;

  constructor(
    private readonly transport: LiveTransport,
    private readonly logger: Logger,
  ) {}

  async announce(kind: ChangedKind, id: string): Promise<void> {
    const nonce = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const echoed = this.listening
      ? new Promise<void>((resolve) => {
          this.echoes.set(nonce, resolve);
          timer = setTimeout(resolve, ECHO_WAIT_MS);
        })
      : Promise.resolve();
    try {
      await this.transport.publish(CHANGED_CHANNEL, { kind: "event", channel: kind, item: { id, nonce } });
      await echoed;
    } catch (error) {
      this.logger.warn({ err: error, kind, id }, "could not tell the other processes of a change; they see it within a second (their caches' expiry)");
    } finally {
      clearTimeout(timer);
      this.echoes.delete(nonce);
    }
  }

  /** Calls the handler of each change announced by any process (this one too: harmless, it forgot already) until the returned function is called. */
  async listen(handlers: Record<ChangedKind, (id: string) => void>): Promise<() => Promise<void>> {
    const stop = await this.transport.subscribe(CHANGED_CHANNEL, (message) => {
      if (message.kind !== "event") return;
      const { id, nonce } = (message.item ?? {}) as { id?: unknown; nonce?: unknown };
      const handler = handlers[message.channel as ChangedKind] as ((id: string) => void) | undefined;
      if (handler && typeof id === "string") handler(id);
      if (typeof nonce === "string") this.echoes.get(nonce)?.();
    });
    this.listening = true;
    return async () => {
      this.listening = false;
      await stop();
    };
  }
}
