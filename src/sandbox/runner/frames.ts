/**
 * The wire between the host and a runner: length-prefixed frames on a
 * descriptor of their own (the runner's fd 3, a Unix socket pair), each a
 * 4-byte big-endian length and that many bytes of UTF-8 JSON.
 *
 * User code can write to that descriptor (Node's permission model does not
 * guard descriptors, and JavaScript cannot take one away from code in the
 * same process), so the reader assumes any bytes at all may arrive: it never
 * holds more than one frame's cap, never builds a string longer than one
 * frame, and reports the first thing that is not a frame instead of
 * throwing. The host then stops that runner; nothing reaches the server.
 *
 * Both sides import this file: the runner may import values only from its
 * own folder.
 */

/**
 * The largest frame either side accepts. The runner never sends a larger
 * one (channel.ts): emits are capped at 32 MB per call and a step's record
 * at 32 MB, a batch that would pass it goes as one frame per message, and
 * a single message that would (a huge return value or response body) is
 * replaced by that call's error.
 */
export const MAX_FRAME_BYTES = 96 * 1024 * 1024;

/** The length prefix of a frame. */
export const FRAME_HEADER_BYTES = 4;

/** One frame holding `message` as JSON; throws what JSON.stringify throws (a BigInt, a cycle). */
export function encodeFrame(message: unknown): Buffer {
  const json = JSON.stringify(message) ?? "null";
  const length = Buffer.byteLength(json);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame.write(json, FRAME_HEADER_BYTES, length, "utf8");
  return frame;
}

export interface FrameReaderOptions {
  onMessage(message: unknown): void;
  /** The first bytes that are not a frame: `reason` says what was wrong. Nothing is read after it. */
  onMalformed(reason: string): void;
  maxFrameBytes?: number;
}

export class FrameReader {
  private readonly options: FrameReaderOptions;
  private readonly maxFrameBytes: number;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The length of the frame being read, once its header is in. */
  private expected = -1;
  private broken = false;

  constructor(options: FrameReaderOptions) {
    this.options = options;
    this.maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
  }

  get failed(): boolean {
    return this.broken;
  }

  push(chunk: Buffer): void {
    if (this.broken || chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.broken) {
      if (this.expected < 0) {
        if (this.buffered < FRAME_HEADER_BYTES) return;
        const length = this.take(FRAME_HEADER_BYTES).readUInt32BE(0);
        if (length > this.maxFrameBytes) return this.fail(`a frame header announced ${length} bytes, over the limit of ${this.maxFrameBytes}`);
        this.expected = length;
      }
      if (this.buffered < this.expected) return;
      const body = this.take(this.expected);
      this.expected = -1;
      let message: unknown;
      try {
        message = JSON.parse(body.toString("utf8"));
      } catch {
        return this.fail(`a frame of ${body.length} bytes was not JSON`);
      }
      this.options.onMessage(message);
    }
  }

  private fail(reason: string): void {
    this.broken = true;
    this.chunks = [];
    this.buffered = 0;
    this.options.onMalformed(reason);
  }

  /** The next `count` bytes (count <= buffered), copied only when they span chunks. */
  private take(count: number): Buffer {
    if (count === 0) return Buffer.alloc(0);
    this.buffered -= count;
    const first = this.chunks[0]!;
    if (first.length > count) {
      this.chunks[0] = first.subarray(count);
      return first.subarray(0, count);
    }
    if (first.length === count) {
      this.chunks.shift();
      return first;
    }
    const out = Buffer.allocUnsafe(count);
    let offset = 0;
    while (offset < count) {
      const chunk = this.chunks[0]!;
      const wanted = count - offset;
      if (chunk.length <= wanted) {
        chunk.copy(out, offset);
        offset += chunk.length;
        this.chunks.shift();
      } else {
        chunk.copy(out, offset, 0, wanted);
        this.chunks[0] = chunk.subarray(wanted);
        offset += wanted;
      }
    }
    return out;
  }
}
