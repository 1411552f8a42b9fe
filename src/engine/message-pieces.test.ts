import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { PieceAssembler, toPieces } from "./message-pieces.js";

describe("message pieces", () => {
  it("cuts a large value into pieces under NOTIFY's limit and puts it back from any order, pieces repeated", () => {
    const value = { body: randomBytes(40_000).toString("base64"), n: 1 };
    const pieces = toPieces("req-1", value);
    expect(pieces.length).toBeGreaterThan(5);
    for (const piece of pieces) expect(Buffer.byteLength(JSON.stringify(piece))).toBeLessThan(7_900);
    const got: Array<[string, unknown]> = [];
    const assembler = new PieceAssembler((id, whole) => got.push([id, whole]));
    for (const piece of [...pieces].reverse()) assembler.take(piece);
    assembler.take(pieces[0]);
    expect(got).toEqual([["req-1", value]]);
  });

  it("keeps only the pieces of values this process waits for, and ignores what is not a piece", () => {
    const got: string[] = [];
    const assembler = new PieceAssembler((id) => got.push(id), (id) => id === "mine");
    for (const piece of toPieces("theirs", { a: 1 })) assembler.take(piece);
    for (const piece of toPieces("mine", { a: 2 })) assembler.take(piece);
    assembler.take({ id: "mine", i: 3, n: 2, d: "" });
    assembler.take("not a piece");
    expect(got).toEqual(["mine"]);
    assembler.clear();
  });
});
