/**
 * The runner's journal: what it has reported and not yet written to the
 * host (channel.ts), kept where the host can read it should the runner die
 * before writing it. One entry at a time, written over the last at the
 * file's start: a header (magic, the position in the channel's byte stream
 * at which its frames were to go, their length), then the frames, as the
 * channel would carry them. The host reads it only when the runner is gone
 * with calls unfinished (runner-process.ts), and feeds what the channel did
 * not bring through the same checks as the channel's frames.
 *
 * The runner's code can write to it too: the host trusts it no more than the
 * channel, and the kernel bounds its size (RLIMIT_FSIZE, resources/resource-limiter.ts).
 */

/** stdin, stdout, stderr, the channel, bwrap's info descriptor, then the journal. */
export const JOURNAL_FD = 5;

const MAGIC = 0x524e4a31; // "RNJ1"
/** Magic, position (two 32-bit halves), length. */
export const JOURNAL_HEADER_BYTES = 16;
/**
 * The largest entry written: past it the reports go to the host at once
 * instead (channel.ts), as they did before the journal. Well under the
 * runner's file-size bound (resource-limiter.ts), which a journal must never
 * reach. The host reads no more than this.
 */
export const JOURNAL_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Makes `entry` a journal entry: its first JOURNAL_HEADER_BYTES are left for
 * the header (written here), the rest are frames that were to start at
 * `position` in the channel's stream. The channel encodes its frames straight
 * after that room (channel.ts), so an entry costs no second copy.
 */
export function writeJournalHeader(entry: Buffer, position: number): Buffer {
  entry.writeUInt32BE(MAGIC, 0);
  entry.writeUInt32BE(Math.floor(position / 2 ** 32), 4);
  entry.writeUInt32BE(position % 2 ** 32, 8);
  entry.writeUInt32BE(entry.length - JOURNAL_HEADER_BYTES, 12);
  return entry;
}

/** The entry at the start of a journal's contents, or null when there is none (nothing journaled, or not an entry). */
export function readJournalEntry(contents: Buffer): { position: number; frames: Buffer } | null {
  if (contents.length < JOURNAL_HEADER_BYTES || contents.readUInt32BE(0) !== MAGIC) return null;
  const position = contents.readUInt32BE(4) * 2 ** 32 + contents.readUInt32BE(8);
  const length = contents.readUInt32BE(12);
  if (JOURNAL_HEADER_BYTES + length > contents.length) return null;
  return { position, frames: contents.subarray(JOURNAL_HEADER_BYTES, JOURNAL_HEADER_BYTES + length) };
}

/**
 * What of an entry the host has not received, given `received` bytes of
 * the channel's stream: the rest of its frames, continuing the stream
 * (`continues`), or all of them after a gap (bytes the runner handed to its
 * channel and never wrote: they are lost, and the host's reader must start
 * afresh at a frame's start), or nothing when the channel brought it all.
 */
export function unreceived(entry: { position: number; frames: Buffer }, received: number): { bytes: Buffer; continues: boolean } | null {
  const end = entry.position + entry.frames.length;
  if (received >= end) return null;
  if (received < entry.position) return { bytes: entry.frames, continues: false };
  return { bytes: entry.frames.subarray(received - entry.position), continues: true };
}
