import type { LiveMessage } from "../client/api-client.js";
import { listenForInterrupt } from "./interrupt.js";
import { printJson, type Io } from "./output.js";

export interface LatestThenFollow<T extends { id: string }> {
  io: Io;
  /** The latest items, newest first, as the API lists them. */
  latest(): Promise<T[]>;
  /** Opens the live stream; absent when not following. */
  open?: ((signal: AbortSignal) => Promise<AsyncIterable<LiveMessage<T>>>) | undefined;
  print(item: T): void;
  json: boolean;
  /** "events of echo", for the messages. */
  what: string;
}

/**
 * Prints the latest items oldest first, then, when following, the new ones
 * as they come until Ctrl-C. The stream is opened before the latest are read,
 * so nothing falls in between; items seen in both are printed once.
 * Returns the exit code: 0 when stopped by the user or by the server closing
 * the stream on purpose, 1 when the connection ended unasked.
 */
export async function showLatestThenFollow<T extends { id: string }>(options: LatestThenFollow<T>): Promise<number> {
  const { io, json } = options;
  const show = (item: T) => (json ? io.stdout.write(`${JSON.stringify(item)}\n`) : options.print(item));
  if (!options.open) {
    const items = (await options.latest()).reverse();
    if (json) printJson(io, items);
    else if (items.length === 0) io.stderr.write(`No ${options.what} yet.\n`);
    else items.forEach(show);
    return 0;
  }

  const interrupt = listenForInterrupt();
  try {
    const stream = await options.open(interrupt.signal);
    const items = (await options.latest()).reverse();
    items.forEach(show);
    const seen = new Set(items.map((item) => item.id));
    io.stderr.write(`Following ${options.what}; Ctrl-C to stop.\n`);
    for await (const message of stream) {
      if (message.kind === "closed") {
        io.stderr.write(`The server closed the stream: ${message.reason}\n`);
        return 0;
      }
      if (!seen.has(message.item.id)) show(message.item);
    }
    if (interrupt.signal.aborted) return 0;
    io.stderr.write("The server ended the stream (was it stopped?). Run the command again to carry on.\n");
    return 1;
  } finally {
    interrupt.dispose();
  }
}
