/**
 * The runner's end of the wire (frames.ts): descriptor 3, opened as a
 * socket before any user code runs. Messages go out as frames, never one
 * over the cap: a batch that would pass it goes as one frame per message,
 * and a single message that would (a response body of hundreds of MB) is
 * replaced by that call's error, so the host never has to refuse a frame
 * the runner itself wrote.
 *
 * What calls report as they go (a step's end, a call's ending, logs) is
 * posted: it waits in an outbox until the end of the current microtask
 * checkpoint, so that the reports of every call that got there in one turn
 * of the event loop leave in one write() (under load a runner's runs move in
 * step, and the write was a third of its CPU, one per report). A step chain
 * awaits `secured()` before the next step's code runs, so a step that never
 * returns cannot hold back what the steps before it reported. What must
 * reach the host before the process may die (a fault, a retiring ending) is
 * sent at once, after whatever waits in the outbox.
 *
 * A step's report is kept rather than posted: it waits for the next write
 * (its run's ending, most often) or KEPT_MS, and before the next step's code
 * runs it is written to the journal instead (descriptor 5, a file only the
 * host reads, and only when this process dies mid-call: journal.ts). Posted,
 * each step of a run alone cost a write here and a wake-up and a read on the
 * host; a step that loops forever still takes nothing reported with it.
 */
import { writeSync } from "node:fs";
import { Socket } from "node:net";
import type { RunnerMessage, WireResponse } from "../protocol.js";
import { FRAME_HEADER_BYTES, FrameReader, MAX_FRAME_BYTES } from "./frames.js";
import { JOURNAL_FD, JOURNAL_HEADER_BYTES, JOURNAL_MAX_BYTES, writeJournalHeader } from "./journal.js";

/** stdin, stdout, stderr, then the channel. */
export const CHANNEL_FD = 3;

export interface RunnerChannel {
  /** Written now, after what waits in the outbox. */
  send(message: RunnerMessage<WireResponse>): void;
  /** Written at the end of this microtask checkpoint, with everything else posted by then, in one write. */
  post(message: RunnerMessage<WireResponse>): void;
  /** Written with the next write, or within KEPT_MS: what must survive this process, not reach the host at once (a step's report). */
  keep(message: RunnerMessage<WireResponse>): void;
  /** Resolves once everything kept or posted so far would reach the host were this process to die now: journaled, or else written. */
  secured(): Promise<void>;
}

/** How long a kept report waits for a write to go with: a long step's earlier reports still reach the host soon. */
const KEPT_MS = 20;

export interface ChannelOptions {
  onMessage(message: unknown): void;
  /** The host is gone, or sent what is not a frame: nobody is left to answer to. */
  onLost(): void;
}

function tooLarge(message: RunnerMessage<WireResponse>, bytes: number): RunnerMessage<WireResponse> | null {
  if (message.type === "batch" || message.type === "ready" || message.id === null) return null;
  const megabytes = (bytes / 1024 / 1024).toFixed(1);
  return {
    type: "error",
    id: message.id,
    error: { code: "UserError", name: "RangeError", message: `The call's ${message.type} is ${megabytes} MB, more than the ${MAX_FRAME_BYTES / 1024 / 1024} MB a runner can send to the server. Send large data elsewhere and pass a reference.` },
    db: null,
    retire: true,
  };
}

export function openChannel(options: ChannelOptions): RunnerChannel {
  const socket = new Socket({ fd: CHANNEL_FD, readable: true, writable: true });
  // Taken now, before user code runs: replacing require("fs").writeSync later does not reach the runner's own writes.
  const writeToDescriptor = writeSync;
  /**
   * Straight to the descriptor while nothing waits in the socket's queue: no
   * stream machinery on the hottest path, and the bytes are out before this
   * returns (a fault reported just before process.exit() reaches the host).
   * What the descriptor does not take now (the host reads slower than a big
   * emit is written) goes through the socket's queue, and so does everything
   * after it until the queue is empty, so frames stay in order.
   */
  const writeFrame = (frame: Buffer): void => {
    let written = 0;
    if (socket.writableLength === 0) {
      try {
        written = writeToDescriptor(CHANNEL_FD, frame);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return options.onLost();
      }
    }
    if (written < frame.length) socket.write(written === 0 ? frame : frame.subarray(written));
  };
  const reader = new FrameReader({ onMessage: options.onMessage, onMalformed: () => options.onLost() });
  socket.on("data", (chunk: Buffer) => reader.push(chunk));
  socket.on("end", () => options.onLost());
  socket.on("error", () => options.onLost());

  /** Messages posted and not yet written, as JSON with their byte lengths, in order; and the promise of their write. */
  let outbox: string[] = [];
  let outboxLengths: number[] = [];
  let outboxBytes = 0;
  let outboxWritten: Promise<void> | undefined;
  let markWritten: () => void = () => {};
  const written = Promise.resolve();
  /** Bytes handed to the channel so far, in order: where in its stream the outbox's frames will start. */
  let handed = 0;
  /** Writes the kept reports when nothing else has by then. */
  let keptTimer: NodeJS.Timeout | undefined;
  /** Off once the journal could not be written (no descriptor 5: the host gave none); kept reports are then written before each step. */
  let journaling = true;

  /** The outbox as frames in one buffer, after `room` bytes left free (a journal entry's header). */
  const outboxFrames = (room = 0): Buffer => {
    const frames = Buffer.allocUnsafe(room + outboxBytes);
    let offset = room;
    for (let index = 0; index < outbox.length; index++) {
      const length = outboxLengths[index]!;
      frames.writeUInt32BE(length, offset);
      frames.write(outbox[index]!, offset + FRAME_HEADER_BYTES, length, "utf8");
      offset += FRAME_HEADER_BYTES + length;
    }
    return frames;
  };

  /** Everything in the outbox as frames in one buffer, one write. */
  const writeOutbox = (): void => {
    if (outbox.length === 0) return;
    const frames = outboxFrames();
    outbox = [];
    outboxLengths = [];
    outboxBytes = 0;
    clearTimeout(keptTimer);
    keptTimer = undefined;
    handed += frames.length;
    if (!socket.destroyed) writeFrame(frames);
  };
  const flushOutbox = (): void => {
    const done = markWritten;
    outboxWritten = undefined;
    writeOutbox();
    done();
  };

  /** Into the outbox: `message`, or one frame per message of a batch past the cap, or the call's error in place of a message past it. */
  const encode = (message: RunnerMessage<WireResponse>): void => {
    let json: string;
    try {
      json = JSON.stringify(message);
    } catch {
      // Everything sent was made JSON-safe by the runner; a message that still is not is a bug, not worth the process.
      return;
    }
    const length = Buffer.byteLength(json);
    if (length > MAX_FRAME_BYTES) {
      if (message.type === "batch") return message.messages.forEach(encode);
      const replacement = tooLarge(message, length + FRAME_HEADER_BYTES);
      if (replacement) encode(replacement);
      return;
    }
    outbox.push(json);
    outboxLengths.push(length);
    outboxBytes += FRAME_HEADER_BYTES + length;
  };

  const send = (message: RunnerMessage<WireResponse>): void => {
    encode(message);
    writeOutbox();
  };
  /** The outbox written at the end of this microtask checkpoint; resolves once it is. */
  const flushSoon = (): Promise<void> => {
    if (outboxWritten) return outboxWritten;
    outboxWritten = new Promise((resolve) => (markWritten = resolve));
    queueMicrotask(flushOutbox);
    return outboxWritten;
  };
  const post = (message: RunnerMessage<WireResponse>): void => {
    encode(message);
    void flushSoon();
  };
  const keep = (message: RunnerMessage<WireResponse>): void => {
    encode(message);
    keptTimer ??= setTimeout(writeOutbox, KEPT_MS);
  };
  /** The journal written (or, failing that, the outbox to the host) at the end of this microtask checkpoint: once for every run that got to a step's end this turn. */
  let journalWritten: Promise<void> | undefined;
  const secureOutbox = (): void => {
    journalWritten = undefined;
    if (outbox.length === 0) return;
    // Reports too large for a journal entry go to the host at once, as all did before the journal.
    if (journaling && JOURNAL_HEADER_BYTES + outboxBytes <= JOURNAL_MAX_BYTES) {
      try {
        const entry = writeJournalHeader(outboxFrames(JOURNAL_HEADER_BYTES), handed);
        if (writeToDescriptor(JOURNAL_FD, entry, 0, entry.length, 0) === entry.length) return;
      } catch {
        // No journal (descriptor 5 is not one), or it cannot be written: written to the host from now on.
      }
      journaling = false;
    }
    flushOutbox();
  };
  const secured = (): Promise<void> => {
    if (outbox.length === 0) return outboxWritten ?? written;
    journalWritten ??= new Promise((resolve) =>
      queueMicrotask(() => {
        secureOutbox();
        resolve();
      }),
    );
    return journalWritten;
  };
  return { send, post, keep, secured };
}
