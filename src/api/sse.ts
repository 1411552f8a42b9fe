import type { FastifyReply, FastifyRequest } from "fastify";

export const SSE_KEEP_ALIVE_MS = 15_000;

export interface SseStream {
  /** One SSE message; without a name it is a plain "message" event. */
  send(data: unknown, eventName?: string, id?: string): void;
  close(): void;
  readonly closed: Promise<void>;
}

/**
 * The open streams of one app, so that shutdown can end them: a stream never
 * finishes by itself, and the server waits for open requests before it stops.
 */
export class SseStreams {
  private readonly open = new Set<SseStream>();

  start(request: FastifyRequest, reply: FastifyReply, keepAliveMs = SSE_KEEP_ALIVE_MS): SseStream {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // Proxies such as nginx buffer responses unless told not to.
      "x-accel-buffering": "no",
    });
    raw.write(": connected\n\n");
    let finish!: () => void;
    const closed = new Promise<void>((resolve) => (finish = resolve));
    const keepAlive = setInterval(() => raw.write(": keep-alive\n\n"), keepAliveMs);
    let ended = false;
    const stream: SseStream = {
      send(data, eventName, id) {
        if (ended) return;
        const lines = [id ? `id: ${id}` : null, eventName ? `event: ${eventName}` : null, `data: ${JSON.stringify(data)}`].filter(Boolean);
        raw.write(`${lines.join("\n")}\n\n`);
      },
      close() {
        if (ended) return;
        ended = true;
        clearInterval(keepAlive);
        raw.end();
      },
      closed,
    };
    const cleanUp = () => {
      ended = true;
      clearInterval(keepAlive);
      this.open.delete(stream);
      finish();
    };
    request.raw.on("close", cleanUp);
    raw.on("close", cleanUp);
    this.open.add(stream);
    return stream;
  }

  closeAll(): void {
    for (const stream of this.open) stream.close();
  }
}
