/**
 * A small map whose entries expire after `ttlMs`, for rows read on hot paths
 * that other processes may change: a change is seen within the ttl, and the
 * process that made it clears the entry at once. Bounded: past `maxEntries`
 * it starts over rather than tracking recency.
 */
export class ExpiringCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();
  /** Counts deletes and clears: a read that started before one must not be kept (see load). */
  private generation = 0;

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

  /**
   * `read()`'s value, kept only when nothing was deleted or cleared while it
   * was read: a row read just before another process's change, and answered
   * just after its "changed" message, is used once but not kept for the ttl.
   */
  async readThrough(key: K, read: () => Promise<V>): Promise<V> {
    const before = this.generation;
    const value = await read();
    return before === this.generation ? this.set(key, value) : value;
  }

  delete(key: K): void {
    this.generation += 1;
    this.entries.delete(key);
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
