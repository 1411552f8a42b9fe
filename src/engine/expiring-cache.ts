/**
 * A small map whose entries expire after `ttlMs`, for rows read on hot paths
 * that other processes may change: a change is seen within the ttl, and the
 * process that made it clears the entry at once. Bounded: past `maxEntries`
 * it starts over rather than tracking recency.
 */
export class ExpiringCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();

  constructor(private readonly options: { ttlMs: number; maxEntries: number; now?: () => number }) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > this.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: K, value: V): V {
    if (this.entries.size >= this.options.maxEntries) this.entries.clear();
    this.entries.set(key, { value, until: this.now() + this.options.ttlMs });
    return value;
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
