import type { OutboxSend } from "../../domain/durable-sends.js";
import type { Workflow } from "../../domain/workflows.js";

/**
 * Where `$.send.*` calls go, carried out from the send outbox after the run
 * has been recorded (`emit` is appended with the run itself, in its
 * transaction, and never comes here).
 */
export interface Destinations {
  /**
   * Carries out one attempt of a send; resolves with what the destination
   * said (the answer's status, the object written), or null when nothing;
   * throws with why it failed. Repeating an attempt is safe: it carries the
   * send's idempotency key.
   */
  deliver(workflow: Workflow, send: OutboxSend): Promise<string | null>;
}
