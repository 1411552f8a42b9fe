/**
 * A Map, and a Set, for entries that come and go by the thousand a second
 * in a structure that lives as long as the server: calls in flight, runs in
 * progress, a source's batch waiting. With a plain Map there, every value
 * that passes through it (and everything it references: a run, its event,
 * its steps) is promoted to V8's old generation and dies there.
 *
 * Why: V8 gives a Map a new hash table whenever it grows, shrinks, or fills
 * up with the holes its deletions leave (with entries coming and going, every
 * few insertions), and the table it leaves keeps pointing at the entries it
 * held. Once the Map itself is old, each new table is allocated in the old
 * generation too, and each table it leaves is old garbage whose pointers into
 * the young generation a scavenge must take as roots: the entries it held
 * then survive every scavenge until the next mark-compact. Session 29: a
 * long-lived Map used this way promoted 755 KB a scavenge in a
 * micro-benchmark where a slot array promoted nothing, and the server
 * promoted about 5 KB of each run, which made a mark-compact every 4-5 s at
 * half the peak, and most of its p99 (docs/performance.md).
 *
 * So these move their entries to a new Map (or Set) every
 * RENEW_AFTER_DELETIONS deletions, or as many as they hold when that is
 * more (amortized O(1) a deletion): the table that churns is young, and what
 * it leaves behind dies in the next scavenge. Going through one (keys,
 * values, entries, for…of) goes through a copy, so it may be changed on the
 * way.
 */

/**
 * About a fifth of the runs between two scavenges of the server (each
 * allocates about 64 KB, and a scavenge comes every 13 MB or so): a Map
 * renewed this often is young when it churns.
 */
export const RENEW_AFTER_DELETIONS = 64;

export class ChurningMap<K, V> implements Iterable<[K, V]> {
  private map = new Map<K, V>();
  private deletions = 0;

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    if (!this.map.delete(key)) return false;
    if (++this.deletions >= Math.max(RENEW_AFTER_DELETIONS, this.map.size)) {
      this.map = new Map(this.map);
      this.deletions = 0;
    }
    return true;
  }

  clear(): void {
    this.map = new Map();
    this.deletions = 0;
  }

  keys(): K[] {
    return [...this.map.keys()];
  }

  values(): V[] {
    return [...this.map.values()];
  }

  entries(): Array<[K, V]> {
    return [...this.map.entries()];
  }

  [Symbol.iterator](): Iterator<[K, V]> {
    return this.entries()[Symbol.iterator]();
  }
}

/** A ChurningMap's keys, as a Set: renewed the same way. */
export class ChurningSet<T> implements Iterable<T> {
  private readonly map = new ChurningMap<T, true>();

  get size(): number {
    return this.map.size;
  }

  has(value: T): boolean {
    return this.map.has(value);
  }

  add(value: T): this {
    this.map.set(value, true);
    return this;
  }

  delete(value: T): boolean {
    return this.map.delete(value);
  }

  clear(): void {
    this.map.clear();
  }

  values(): T[] {
    return this.map.keys();
  }

  [Symbol.iterator](): Iterator<T> {
    return this.values()[Symbol.iterator]();
  }
}
