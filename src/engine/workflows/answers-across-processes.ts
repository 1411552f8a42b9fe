import type { Logger } from "pino";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { LiveTransport } from "../event-hub.js";
import { PieceAssembler, toPieces } from "../message-pieces.js";
import type { RunEnd, WorkflowResponses } from "./workflow-responses.js";

/** The live channel answers travel on. Emitter ids never start with `$`, so it is nobody's stream. */
export const ANSWERS_CHANNEL = "$runnel:answers";

/** A RunEnd as JSON can carry it: a binary body as base64. */
type WireEnd = Exclude<RunEnd, { kind: "response" }> | { kind: "response"; response: Omit<HttpResponse, "body"> & { body: string | null; base64?: true } };

/**
 * `$.respond` across processes: the worker that ran the workflow publishes
 * its answer when no caller waits for it in its own process; every process
 * that serves endpoints listens, and the one holding the caller answers it
 * (WorkflowResponses.receive). Returns the function that stops listening;
 * `listen` false (a worker, which holds no callers) only sends.
 */
export async function carryAnswersAcross(responses: WorkflowResponses, transport: LiveTransport, logger: Logger, listen: boolean): Promise<() => Promise<void>> {
  responses.sendElsewhere((emitterId, eventId, end) => {
    for (const piece of toPieces(`${emitterId} ${eventId}`, toWire(end))) {
      transport.publish(ANSWERS_CHANNEL, { kind: "event", channel: "", item: piece }).catch((error: unknown) =>
        // The caller then waits until its timeout, which answers it with a 504: said here so an operator can tell why.
        logger.warn({ err: error, emitterId, eventId }, "a workflow's answer could not be sent to the process holding its HTTP caller"),
      );
    }
  });
  if (!listen) return async () => undefined;
  const assembler = new PieceAssembler((id, wire) => {
    // Emitter and event ids hold no space.
    const [emitterId, eventId] = id.split(" ") as [string, string];
    responses.receive(emitterId, eventId, fromWire(wire as WireEnd));
  });
  const stop = await transport.subscribe(ANSWERS_CHANNEL, (message) => {
    if (message.kind === "event") assembler.take(message.item);
  });
  return async () => {
    await stop();
    assembler.clear();
  };
}

function toWire(end: RunEnd): WireEnd {
  if (end.kind !== "response") return end;
  const { body } = end.response;
  if (body === null || typeof body === "string") return { kind: "response", response: { ...end.response, body } };
  return { kind: "response", response: { ...end.response, body: Buffer.from(body).toString("base64"), base64: true } };
}

function fromWire(wire: WireEnd): RunEnd {
  if (wire.kind !== "response") return wire;
  const { base64, body, ...rest } = wire.response;
  return { kind: "response", response: { ...rest, body: base64 && body !== null ? new Uint8Array(Buffer.from(body, "base64")) : body } };
}
