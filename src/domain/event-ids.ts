/**
 * Event ids: `<epoch ms>-<sequence>` (`1606511826306-0`), as the hosted API
 * shows them. They sort in time order and double as paging cursors, so every
 * new id of a source must be greater than the one before it.
 */
export interface EventIdParts {
  ms: number;
  seq: number;
}

// No leading zeros: every id has one spelling, so a cursor matches exactly.
const EVENT_ID = /^(0|[1-9]\d{0,15})-(0|[1-9]\d{0,15})$/;

/** The parts of an event id, or null when `id` is not one (for validating cursors). */
export function parseEventId(id: string): EventIdParts | null {
  const match = EVENT_ID.exec(id);
  if (!match) return null;
  const ms = Number(match[1]);
  const seq = Number(match[2]);
  if (!Number.isSafeInteger(ms) || !Number.isSafeInteger(seq)) return null;
  return { ms, seq };
}

export function formatEventId(parts: EventIdParts): string {
  return `${parts.ms}-${parts.seq}`;
}

/**
 * Orders two event ids by time, then sequence. Plain string comparison is
 * wrong ("10-0" < "9-0"). Throws on a malformed id: callers validate cursors
 * with parseEventId first.
 */
export function compareEventIds(a: string, b: string): number {
  const left = mustParse(a);
  const right = mustParse(b);
  return Math.sign(left.ms - right.ms || left.seq - right.seq);
}

/**
 * `count` new ids, each greater than the one before and than `previousId`.
 * In a new millisecond the sequence starts at 0; in the same millisecond, or
 * when the clock went backwards, the previous millisecond is kept and its
 * sequence continues, so ids never go back in time.
 */
export function nextEventIds(previousId: string | null, now: number, count: number): string[] {
  return nextEventIdParts(previousId, now, count).map(formatEventId);
}

/** As nextEventIds, as parts: what a store writes, without parsing the ids again. */
export function nextEventIdParts(previousId: string | null, now: number, count: number): EventIdParts[] {
  if (!Number.isSafeInteger(now) || now < 0) throw new RangeError(`now must be epoch milliseconds; got ${now}.`);
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`count must be a whole number >= 0; got ${count}.`);
  const previous = previousId === null ? null : mustParse(previousId);
  const first: EventIdParts = previous === null || now > previous.ms ? { ms: now, seq: 0 } : { ms: previous.ms, seq: previous.seq + 1 };
  const parts: EventIdParts[] = [];
  for (let i = 0; i < count; i++) parts.push({ ms: first.ms, seq: first.seq + i });
  return parts;
}

function mustParse(id: string): EventIdParts {
  const parts = parseEventId(id);
  if (parts === null) throw new RangeError(`"${id}" is not an event id (<epoch ms>-<sequence>).`);
  return parts;
}
