import { describe, expect, it } from "vitest";
import { encodeFrame, FrameReader } from "./frames.js";

function reader(maxFrameBytes?: number) {
  const messages: unknown[] = [];
  const failures: string[] = [];
  const frames = new FrameReader({ onMessage: (message) => messages.push(message), onMalformed: (reason) => failures.push(reason), ...(maxFrameBytes ? { maxFrameBytes } : {}) });
  return { frames, messages, failures };
}

describe("the wire's frames", () => {
  it("reads frames whole, several in one chunk", () => {
    const { frames, messages, failures } = reader();
    frames.push(Buffer.concat([encodeFrame({ a: 1 }), encodeFrame("two"), encodeFrame([3, "ünïcödé"])]));
    expect(messages).toEqual([{ a: 1 }, "two", [3, "ünïcödé"]]);
    expect(failures).toEqual([]);
  });

  it("reads a frame split across chunks anywhere, the header too, one byte at a time", () => {
    const { frames, messages } = reader();
    const bytes = Buffer.concat([encodeFrame({ text: "x".repeat(1000), n: 1 }), encodeFrame({ n: 2 })]);
    for (const byte of bytes) frames.push(Buffer.from([byte]));
    expect(messages).toEqual([{ text: "x".repeat(1000), n: 1 }, { n: 2 }]);
  });

  it("refuses a header announcing more than the cap, before reading the rest", () => {
    const { frames, messages, failures } = reader(1024);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(0xffffffff, 0);
    frames.push(header.subarray(0, 2));
    expect(failures).toEqual([]);
    frames.push(header.subarray(2));
    expect(failures).toEqual(["a frame header announced 4294967295 bytes, over the limit of 1024"]);
    // Nothing after a malformed frame is read.
    frames.push(encodeFrame({ late: true }));
    expect(messages).toEqual([]);
    expect(frames.failed).toBe(true);
  });

  it("takes text without a newline (raw bytes written to the descriptor) as an oversized header", () => {
    const { frames, failures } = reader();
    frames.push(Buffer.alloc(64 * 1024, "a"));
    expect(failures[0]).toMatch(/^a frame header announced 1633771873 bytes/);
  });

  it("refuses a frame that is not JSON, and an empty one", () => {
    const garbage = Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from("{{{")]);
    const first = reader();
    first.frames.push(garbage);
    expect(first.failures).toEqual(["a frame of 3 bytes was not JSON"]);
    const second = reader();
    second.frames.push(Buffer.from([0, 0, 0, 0]));
    expect(second.failures).toEqual(["a frame of 0 bytes was not JSON"]);
  });

  it("waits for a frame that is under the cap but not all there yet", () => {
    const { frames, messages, failures } = reader();
    const frame = encodeFrame({ big: "y".repeat(100_000) });
    frames.push(frame.subarray(0, 50_000));
    expect(messages).toEqual([]);
    expect(failures).toEqual([]);
    frames.push(frame.subarray(50_000));
    expect(messages).toHaveLength(1);
  });

  it("throws what JSON.stringify throws when encoding, so the caller can blame the value", () => {
    expect(() => encodeFrame({ n: 1n })).toThrow(TypeError);
  });
});
