import { setFlagsFromString } from "node:v8";

/**
 * Turns off V8's allocation-site pretenuring in the server's process, before
 * it serves anything.
 *
 * Pretenuring watches which object literals' objects survive a scavenge and,
 * for those that mostly do, allocates every later one directly in the old
 * generation. A server's per-request objects survive only when a request is
 * slow (a runner starting, a burst, the warm-up), but once a site is judged
 * long-lived it stays so, and each of its old objects, dead a millisecond
 * later, then keeps what it points to in the young generation alive through
 * scavenges until the next mark-compact: the run's state, its event, its
 * steps. Session 29, an even 2,800 workflow runs/s (once the hot path's
 * object spreads were gone, see domain/own-copy.ts): 546-594 KB promoted a
 * scavenge with pretenuring, 0-12 KB without, and no mark-compact of the
 * main heap during the run instead of one every 4-5 s (docs/performance.md).
 *
 * Changing a V8 flag once the process runs is allowed for this one: it is
 * read at each scavenge's pretenuring decision, and no site has been judged
 * before the server takes load.
 */
export function tuneGarbageCollection(): void {
  setFlagsFromString("--no-allocation-site-pretenuring");
}
