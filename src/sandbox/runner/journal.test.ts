import { describe, expect, it } from "vitest";
import { encodeFrame, FrameReader } from "./frames.js";
import { JOURNAL_HEADER_BYTES, readJournalEntry, unreceived, writeJournalHeader } from "./journal.js";

/** An entry as the channel makes one: room for the header, then the frames. */
const journalEntry = (position: number, frames: Buffer) => writeJournalHeader(Buffer.concat([Buffer.alloc(JOURNAL_HEADER_BYTES), frames]), position);

/** What a host's reader makes of `bytes` after `before` (the channel's stream so far). */
function read(before: Buffer, bytes: Buffer): unknown[] {
  const messages: unknown[] = [];
  const reader = new FrameReader({ onMessage: (message) => messages.push(message), onMalformed: (reason) => messages.push({ malformed: reason }) });
  reader.push(before);
  messages.length = 0;
  reader.push(bytes);
  return messages;
}

describe("the runner's journal", () => {
  const written = Buffer.concat([encodeFrame({ n: 1 }), encodeFrame({ n: 2 })]);
  const kept = Buffer.concat([encodeFrame({ step: 0 }), encodeFrame({ step: 1, text: "ünïcödé" })]);
  const entry = { position: written.length, frames: kept };

  it("reads back the entry it wrote, positions past 2^32 included, and nothing from an empty or foreign file", () => {
    expect(readJournalEntry(journalEntry(written.length, kept))).toEqual(entry);
    const far = 2 ** 40 + 12_345;
    expect(readJournalEntry(journalEntry(far, kept))?.position).toBe(far);
    // An entry written over a longer one: the bytes past its length are the old entry's, and not read.
    expect(readJournalEntry(Buffer.concat([journalEntry(7, kept.subarray(0, 5)), Buffer.from("stale bytes")]))).toEqual({ position: 7, frames: kept.subarray(0, 5) });
    expect(readJournalEntry(Buffer.alloc(0))).toBeNull();
    expect(readJournalEntry(Buffer.from("not a journal at all, just text"))).toBeNull();
    // A header that claims more than the file holds (cut short, or written by the runner's code).
    expect(readJournalEntry(journalEntry(0, kept).subarray(0, 20))).toBeNull();
  });

  it("gives the host nothing when the channel brought the entry's frames, whole", () => {
    expect(unreceived(entry, written.length + kept.length)).toBeNull();
    expect(unreceived(entry, written.length + kept.length + 100)).toBeNull();
  });

  it("gives the rest of the frames when the channel brought part of them, and the stream reads on as if the channel had", () => {
    const partWay = written.length + 6;
    const rest = unreceived(entry, partWay)!;
    expect(rest.continues).toBe(true);
    const stream = Buffer.concat([written, kept]);
    expect(read(stream.subarray(0, partWay), rest.bytes)).toEqual([{ step: 0 }, { step: 1, text: "ünïcödé" }]);
    // None of them yet: all of them, continuing the stream.
    expect(unreceived(entry, written.length)).toEqual({ bytes: kept, continues: true });
  });

  it("gives all of the frames, to be read afresh, after a gap (bytes the runner handed over and never wrote)", () => {
    const rest = unreceived(entry, written.length - 3)!;
    expect(rest).toEqual({ bytes: kept, continues: false });
    expect(read(Buffer.alloc(0), rest.bytes)).toEqual([{ step: 0 }, { step: 1, text: "ünïcödé" }]);
  });
});
