/**
 * The reference: a bare Fastify POST route that parses the JSON body (Fastify
 * does for application/json) and answers {ok:true}. Run as a child process of
 * its own (`node fastify-server.js <port>`), as Node-RED is, so that neither
 * shares an event loop or a core's scheduling with the bench process.
 */
import Fastify from "fastify";
import { fileURLToPath } from "node:url";
import { startChildServer, type ChildServer } from "./child-server.js";

export const FASTIFY_SCRIPT = fileURLToPath(import.meta.url);

/** Starts the reference on `port` in a child process. */
export function startFastify(port: number, body: string): Promise<ChildServer> {
  return startChildServer("the bare Fastify server", [FASTIFY_SCRIPT, String(port)], `http://127.0.0.1:${port}/bench`, body);
}

if (process.argv[1] === FASTIFY_SCRIPT) {
  const app = Fastify();
  app.post("/bench", async () => ({ ok: true }));
  await app.listen({ host: "127.0.0.1", port: Number(process.argv[2]) });
}
