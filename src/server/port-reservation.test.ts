import { createServer as createHttpServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { reservePort } from "./port-reservation.js";

/** A raw HTTP/1.1 request on its own connection; resolves with what came back once the server closes it. */
function rawRequest(port: number): { socket: Socket; answer: Promise<string> } {
  const socket = connect({ host: "127.0.0.1", port });
  socket.write("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  let text = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  const answer = new Promise<string>((resolve) => {
    socket.once("close", () => resolve(text));
    socket.once("error", () => undefined);
  });
  return { socket, answer };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe("the port held while the server starts", () => {
  it("keeps a client that connects meanwhile, and the HTTP server answers it once it listens", async () => {
    const reservation = await reservePort("127.0.0.1", 0);
    const early = rawRequest(reservation.port);
    await new Promise((resolve) => early.socket.once("connect", resolve));
    // Held, unanswered: nothing comes back while the server is still starting.
    await new Promise((resolve) => setTimeout(resolve, 150));
    reservation.release();
    const server = createHttpServer((_request, response) => response.end("served after the start"));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: reservation.port }, resolve));
    reservation.handOver(server);
    const text = await early.answer;
    expect(text).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(text).toContain("served after the start");
  });

  it("closes the held connections at once when the start fails, so their clients need not wait for a timeout", async () => {
    const reservation = await reservePort("127.0.0.1", 0);
    const early = rawRequest(reservation.port);
    await new Promise((resolve) => early.socket.once("connect", resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const began = Date.now();
    reservation.release();
    reservation.dropHeld();
    expect(await early.answer).toBe("");
    expect(Date.now() - began).toBeLessThan(2_000);
  });

  it("refuses the port when it is taken, naming nothing else", async () => {
    const first = await reservePort("127.0.0.1", 0);
    await expect(reservePort("127.0.0.1", first.port)).rejects.toMatchObject({ code: "EADDRINUSE" });
    first.release();
  });
});
