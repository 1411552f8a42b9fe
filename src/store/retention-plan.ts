/**
 * Keeping an emitter's newest events (per channel) and log lines, by count:
 * the store knows how many rows each holds (`emitter_state`), so a trim
 * deletes the oldest rows beyond the retention, a cost that follows what was
 * appended, instead of walking the kept rows to find where they start. A
 * count not known (rows from before it was kept, or after events were deleted
 * by hand) is counted once. Pure rules; both adapters use them.
 */

/** Events held per channel; a channel missing has no count yet. */
export type ChannelCounts = Record<string, number>;

export function parseChannelCounts(text: string | null | undefined): ChannelCounts {
  if (!text) return {};
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
  const counts: ChannelCounts = {};
  for (const [channel, count] of Object.entries(parsed)) if (typeof count === "number" && Number.isSafeInteger(count) && count >= 0) counts[channel] = count;
  return counts;
}

export function formatChannelCounts(counts: ChannelCounts): string {
  return JSON.stringify(counts);
}

/** How many events each channel gets from an append. */
export function addedPerChannel(events: ReadonlyArray<{ channel: string }>): Map<string, number> {
  const added = new Map<string, number>();
  for (const event of events) added.set(event.channel, (added.get(event.channel) ?? 0) + 1);
  return added;
}

/** Of `held` rows (the new ones included), how many of the oldest go so that `keep` remain. */
export function excessOf(held: number, keep: number): number {
  return Math.max(0, held - keep);
}

/** The count stored in a row (bigint columns read as text on PostgreSQL); null when not known. */
export function readCount(value: number | string | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  const count = Number(value);
  return Number.isSafeInteger(count) && count >= 0 ? count : null;
}
