import type { Logger } from "pino";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { HubMessage, LiveTransport } from "../event-hub.js";
import type { RunEnd, WorkflowResponses } from "./workflow-responses.js";

/** The live channel answers travel on. Emitter ids never start with `$`, so it is nobody's stream. */
export const ANSWERS_CHANNEL = "$runnel:answers";

/**
 * Pieces of at most this many base64 characters: with the envelope, one
 * stays under PostgreSQL's NOTIFY limit (8000 bytes), which would otherwise
 * cut a large `$.respond` body down to a stub.
 */
const PIECE_CHARS = 6_000;
/** Pieces of an answer that never all came (a lost message) are dropped after this long. */
const ASSEMBLY_MS = 10_000;

/** One piece of an answer on the wire: `d` is a slice of the base64 of the answer's JSON. */
interface AnswerPiece {
  emitterId: string;
  eventId: string;
  /** This piece's index, and how many there are. */
  i: number;
  n: number;
  d: string;
}

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
    for (const piece of toPieces(emitterId, eventId, end)) {
      transport.publish(ANSWERS_CHANNEL, { kind: "event", channel: "", item: piece }).catch((error: unknown) =>
        // The caller then waits until its timeout, which answers it with a 504: said here so an operator can tell why.
        logger.warn({ err: error, emitterId, eventId }, "a workflow's answer could not be sent to the process holding its HTTP caller"),
      );
    }
  });
  if (!listen) return async () => undefined;
  const assembler = new AnswerAssembler((emitterId, eventId, end) => responses.receive(emitterId, eventId, end));
  const stop = await transport.subscribe(ANSWERS_CHANNEL, (message) => assembler.take(message));
  return async () => {
    await stop();
    assembler.clear();
  };
}

function toPieces(emitterId: string, eventId: string, end: RunEnd): AnswerPiece[] {
  const text = Buffer.from(JSON.stringify(toWire(end))).toString("base64");
  const n = Math.max(1, Math.ceil(text.length / PIECE_CHARS));
  return Array.from({ length: n }, (_, i) => ({ emitterId, eventId, i, n, d: text.slice(i * PIECE_CHARS, (i + 1) * PIECE_CHARS) }));
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

/** Puts answers back together from their pieces, which may come in any order (NOTIFY goes through a pool). */
class AnswerAssembler {
  private readonly partial = new Map<string, { pieces: string[]; got: number; timer: NodeJS.Timeout }>();

  constructor(private readonly deliver: (emitterId: string, eventId: string, end: RunEnd) => void) {}

  take(message: HubMessage): void {
    if (message.kind !== "event" || !isPiece(message.item)) return;
    const piece = message.item;
    if (piece.n === 1) return this.finish(piece, piece.d);
    const key = `${piece.emitterId} ${piece.eventId}`;
    let entry = this.partial.get(key);
    if (!entry) {
      const timer = setTimeout(() => this.partial.delete(key), ASSEMBLY_MS);
      timer.unref();
      entry = { pieces: new Array<string>(piece.n), got: 0, timer };
      this.partial.set(key, entry);
    }
    if (entry.pieces[piece.i] !== undefined) return;
    entry.pieces[piece.i] = piece.d;
    entry.got += 1;
    if (entry.got < piece.n) return;
    clearTimeout(entry.timer);
    this.partial.delete(key);
    this.finish(piece, entry.pieces.join(""));
  }

  clear(): void {
    for (const entry of this.partial.values()) clearTimeout(entry.timer);
    this.partial.clear();
  }

  private finish(piece: AnswerPiece, base64: string): void {
    let wire: WireEnd;
    try {
      wire = JSON.parse(Buffer.from(base64, "base64").toString()) as WireEnd;
    } catch {
      return;
    }
    this.deliver(piece.emitterId, piece.eventId, fromWire(wire));
  }
}

function isPiece(item: unknown): item is AnswerPiece {
  const piece = item as Partial<AnswerPiece> | null;
  return (
    typeof piece?.emitterId === "string" &&
    typeof piece.eventId === "string" &&
    typeof piece.d === "string" &&
    Number.isInteger(piece.i) &&
    Number.isInteger(piece.n) &&
    piece.n! > 0 &&
    piece.n! <= 10_000 &&
    piece.i! >= 0 &&
    piece.i! < piece.n!
  );
}
