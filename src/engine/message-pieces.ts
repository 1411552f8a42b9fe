/**
 * A value too large for one live message (PostgreSQL's NOTIFY takes under
 * 8000 bytes) travels in pieces: its JSON, base64, cut in slices. Used for
 * what crosses processes to one waiting caller: a `$.respond` answer, the
 * outcome of a source's run on a worker.
 */

/** Base64 characters a piece carries at most: with its envelope, one stays under NOTIFY's limit. */
const PIECE_CHARS = 6_000;
/** Pieces of a value that never all came (a lost message) are dropped after this long. */
const ASSEMBLY_MS = 10_000;

/** One piece on the wire: `d` is a slice of the base64 of the value's JSON; `id` names the value. */
export interface MessagePiece {
  id: string;
  /** This piece's index, and how many there are. */
  i: number;
  n: number;
  d: string;
}

export function toPieces(id: string, value: unknown): MessagePiece[] {
  const text = Buffer.from(JSON.stringify(value)).toString("base64");
  const n = Math.max(1, Math.ceil(text.length / PIECE_CHARS));
  return Array.from({ length: n }, (_, i) => ({ id, i, n, d: text.slice(i * PIECE_CHARS, (i + 1) * PIECE_CHARS) }));
}

/** Puts values back together from their pieces, which may come in any order and more than once. */
export class PieceAssembler {
  private readonly partial = new Map<string, { pieces: string[]; got: number; timer: NodeJS.Timeout }>();

  /** `wanted`: whether this process waits for the value of an id at all (others' pieces are not kept). */
  constructor(
    private readonly deliver: (id: string, value: unknown) => void,
    private readonly wanted: (id: string) => boolean = () => true,
  ) {}

  take(item: unknown): void {
    if (!isPiece(item) || !this.wanted(item.id)) return;
    if (item.n === 1) return this.finish(item.id, item.d);
    let entry = this.partial.get(item.id);
    if (!entry) {
      const timer = setTimeout(() => this.partial.delete(item.id), ASSEMBLY_MS);
      timer.unref();
      entry = { pieces: new Array<string>(item.n), got: 0, timer };
      this.partial.set(item.id, entry);
    }
    if (entry.pieces[item.i] !== undefined) return;
    entry.pieces[item.i] = item.d;
    entry.got += 1;
    if (entry.got < item.n) return;
    clearTimeout(entry.timer);
    this.partial.delete(item.id);
    this.finish(item.id, entry.pieces.join(""));
  }

  clear(): void {
    for (const entry of this.partial.values()) clearTimeout(entry.timer);
    this.partial.clear();
  }

  private finish(id: string, base64: string): void {
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(base64, "base64").toString());
    } catch {
      return;
    }
    this.deliver(id, value);
  }
}

function isPiece(item: unknown): item is MessagePiece {
  const piece = item as Partial<MessagePiece> | null;
  return (
    typeof piece?.id === "string" &&
    typeof piece.d === "string" &&
    Number.isInteger(piece.i) &&
    Number.isInteger(piece.n) &&
    piece.n! > 0 &&
    piece.n! <= 10_000 &&
    piece.i! >= 0 &&
    piece.i! < piece.n!
  );
}
