import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this request was answered with. */
  answered: number;
}

/**
 * A real HTTP server on loopback standing in for a webhook's receiver: it
 * answers the first `failFirst` requests 500, the rest 200, and keeps every
 * request it got.
 */
export async function startWebhookReceiver(options: { failFirst?: number; alwaysFail?: boolean } = {}): Promise<{ url: string; received: ReceivedRequest[]; close(): Promise<void> }> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const answered = options.alwaysFail || received.length < (options.failFirst ?? 0) ? 500 : 200;
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), answered });
      response.writeHead(answered, { "content-type": "text/plain" }).end(answered === 200 ? "ok" : "try again");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
