import type { Logger } from "pino";

/**
 * A warning for errors that come in bursts: BullMQ's connections each
 * report every failed reconnect, dozens a second while Redis is down. The
 * first of each message is logged at once; the same again is counted and
 * logged at most once per `everyMs`, with how many were left out.
 */
export function throttledWarning(logger: Logger, text: string, everyMs = 30_000, now: () => number = Date.now): (error: Error) => void {
  const seen = new Map<string, { loggedAt: number; leftOut: number }>();
  return (error) => {
    const key = error.message;
    const known = seen.get(key);
    const at = now();
    if (known && at - known.loggedAt < everyMs) {
      known.leftOut += 1;
      return;
    }
    logger.warn({ err: error, ...(known && known.leftOut > 0 ? { repeated: known.leftOut } : {}) }, text);
    if (seen.size > 100) seen.clear();
    seen.set(key, { loggedAt: at, leftOut: 0 });
  };
}
