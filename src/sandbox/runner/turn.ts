/**
 * The next turn of the event loop, shared: every call that asks for it within
 * one turn waits on the same setImmediate. A call waits one turn after its
 * code returns so that a promise it left rejected fails it (see step-chain.ts
 * and runner.ts); under load the runs of a batch get there together, and
 * resuming them together also lets their reports leave in one write
 * (channel.ts) rather than one per run.
 */
let waiting: Promise<void> | undefined;

export function nextTurn(): Promise<void> {
  return (waiting ??= new Promise((resolve) =>
    setImmediate(() => {
      waiting = undefined;
      resolve();
    }),
  ));
}
