import type { Server as HttpServer } from "node:http";
import { createServer, type Socket } from "node:net";

export interface PortReservation {
  /** The port held: the one asked for, or the one the system picked for 0. */
  port: number;
  /**
   * Stops accepting (at once: the socket is closed before this returns), for
   * the HTTP server to listen on the port next. Connections accepted so far
   * are kept for handOver.
   */
  release(): void;
  /** Gives the connections accepted while starting to the HTTP server now listening, which answers them. */
  handOver(server: HttpServer): void;
  /** Closes the connections accepted while starting (the start failed): their clients see it at once. */
  dropHeld(): void;
}

/** Connections held while starting, at most: past it, a new one is closed at once (its client may try again). */
const MAX_HELD_CONNECTIONS = 256;

/**
 * Binds the server's port before anything else happens at start-up. A taken
 * port must stop the server before it creates its data folder, its database
 * or the admin user (whose key is shown only once): otherwise the first
 * start prints a key and then fails, and the key is lost to the person who
 * read the error instead. The port stays bound until the HTTP server is
 * ready to listen, so nothing takes it meanwhile; between release and listen
 * lie only a few turns of the event loop.
 *
 * A client that connects meanwhile (a health check polling a starting
 * server) is held, unread, and handed to the HTTP server once it listens:
 * it gets its answer as soon as the server can give one, instead of waiting
 * on a connection nobody reads until its own timeout.
 */
export async function reservePort(host: string, port: number): Promise<PortReservation> {
  const held = new Set<Socket>();
  const holder = createServer({ pauseOnConnect: true }, (socket) => {
    if (held.size >= MAX_HELD_CONNECTIONS) return void socket.destroy();
    held.add(socket);
    socket.once("close", () => held.delete(socket));
    // A client that gives up before the hand-over leaves an error (a reset) behind: nothing to report.
    socket.on("error", () => socket.destroy());
    // Held connections must not keep a process whose start failed from exiting.
    socket.unref();
  });
  await new Promise<void>((resolve, reject) => {
    holder.once("error", reject);
    // exclusive: a cluster worker's listen would otherwise share the primary's handle and never fail.
    holder.listen({ host, port, exclusive: true }, () => {
      holder.off("error", reject);
      resolve();
    });
  });
  // It must not keep a process that fails later in start-up from exiting.
  holder.unref();
  const address = holder.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    release: () => {
      if (holder.listening) holder.close();
    },
    handOver: (server) => {
      for (const socket of held) {
        socket.removeAllListeners("error");
        socket.ref();
        server.emit("connection", socket);
        socket.resume();
      }
      held.clear();
    },
    dropHeld: () => {
      for (const socket of held) socket.destroy();
      held.clear();
    },
  };
}
