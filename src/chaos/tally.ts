/**
 * What a chaos run found, from what was acknowledged and what was stored:
 * the rule behind the "nothing acknowledged is lost or doubled" promise.
 */
export interface Tally {
  /** Requests answered 2xx: from then on, what they carried must happen exactly once. */
  acknowledged: number;
  /** Distinct acknowledged ids found stored (events) or run (workflow runs). */
  stored: number;
  /** Ids stored or run more than once. */
  doubled: number;
  /** Acknowledged ids found nowhere. */
  lost: number;
  /** Ids stored although their request was not acknowledged (the server died before answering): allowed, at least once. */
  storedUnacknowledged: number;
}

export function tally(acknowledged: ReadonlySet<string>, storedIds: readonly string[]): Tally {
  const counts = new Map<string, number>();
  for (const id of storedIds) counts.set(id, (counts.get(id) ?? 0) + 1);
  let stored = 0;
  let lost = 0;
  for (const id of acknowledged) {
    if (counts.has(id)) stored += 1;
    else lost += 1;
  }
  let doubled = 0;
  let storedUnacknowledged = 0;
  for (const [id, count] of counts) {
    if (count > 1) doubled += 1;
    if (!acknowledged.has(id)) storedUnacknowledged += 1;
  }
  return { acknowledged: acknowledged.size, stored, doubled, lost, storedUnacknowledged };
}
