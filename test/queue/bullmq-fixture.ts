import { Queue } from "bullmq";
import { randomBytes } from "node:crypto";
import pino from "pino";
import { newId } from "../../src/domain/ids.js";
import { BullmqJobQueue } from "../../src/queue/bullmq/bullmq-job-queue.js";
import type { BullmqTarget } from "../../src/queue/bullmq/bullmq-backend.js";
import type { QueueFixture } from "./conformance.js";

/** How often the test instances look for claims whose lease ran out: several times within the suite's short lease. */
const STALL_CHECK_MS = 250;

/**
 * A BullMQ backend for one test: its own namespace (a Redis key prefix, a
 * PostgreSQL schema), removed by `cleanUp` after. The queue needs no rows
 * of the store: deliveries and timers are made up.
 */
export function bullmqFixture(target: BullmqTarget, cleanUp: () => Promise<void>): QueueFixture {
  const ownerId = newId("user");
  const listenerId = newId("workflow");
  const emitterId = newId("deployedComponent");
  const logger = pino({ level: "silent" });
  return {
    open: ({ leaseMs, claimer, renewClaims }) =>
      BullmqJobQueue.open({ target, logger, leaseMs, stallCheckMs: STALL_CHECK_MS, claimer: claimer ?? `instance-${randomBytes(6).toString("hex")}`, ...(renewClaims === false ? { renewClaims } : {}) }),
    delivery(eventId, availableAt = Date.now()) {
      const now = Date.now();
      return { listenerId, emitterId, eventId, ownerId, subscriptionId: "sub_test", channel: "", availableAt, createdAt: now, event: { n: eventId }, indexedAtMs: now };
    },
    async timer(schedule) {
      return { sourceId: newId("deployedComponent"), ownerId, schedule };
    },
    // BullMQ keeps the schedule itself: unscheduleTimer is the whole of it.
    removeTimer: async () => undefined,
    dispose: cleanUp,
  };
}

/** A namespace no other test uses. */
export function uniqueNamespace(base: string): string {
  return `${base}_${randomBytes(5).toString("hex")}`;
}

/** Obliterates the adapter's queues (jobs, schedulers, events) in the namespace: what a test leaves behind. */
export async function obliterateQueues(open: (name: string) => Queue): Promise<void> {
  for (const name of ["deliveries", "timer-ticks"]) {
    const queue = open(name);
    try {
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
    }
  }
}
