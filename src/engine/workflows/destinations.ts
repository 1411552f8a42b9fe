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

/**
 * An attempt that would fail the same way at every try: the payload is not
 * one the destination takes, or the network policy refuses the address.
 * The send is given up at once rather than retried for an hour.
 */
export class UndeliverableSendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UndeliverableSendError";
  }
}
