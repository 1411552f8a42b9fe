import { createServer } from "node:net";

export interface PortReservation {
  /** The port held: the one asked for, or the one the system picked for 0. */
  port: number;
  /** Lets the port go (at once: the socket is closed before this returns), for the HTTP server to listen on it next. */
  release(): void;
}

/**
 * Binds the server's port before anything else happens at start-up. A taken
 * port must stop the server before it creates its data folder, its database
 * or the admin user (whose key is shown only once): otherwise the first
 * start prints a key and then fails, and the key is lost to the person who
 * read the error instead. The port stays bound until the HTTP server is
 * ready to listen, so nothing takes it meanwhile; between release and listen
 * lie only a few turns of the event loop.
 */
export async function reservePort(host: string, port: number): Promise<PortReservation> {
  const holder = createServer();
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
  };
}
