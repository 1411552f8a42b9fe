/**
 * `{ ...source }` for the hot path, without object spread. On Node.js 20
 * (V8 11.3) an object literal that begins with a spread keeps what it
 * references alive through young-generation collections: objects built that
 * way and dropped a turn later made each scavenge promote 1.3-4.8 MB in a
 * micro-benchmark, where the same object written as a literal, with the
 * spread later in the literal, or with Object.assign promoted nothing; on a
 * run's path it was most of what the server promoted (docs/architecture.md,
 * "Garbage collection on the hot path"). Node.js 24 does not do it.
 *
 * Object.assign would do for our own objects, but it *sets* each key, so a
 * key "__proto__" (JSON.parse makes one an own property, and user code's
 * values come through JSON) would change the copy's prototype instead of
 * being copied. This defines every own enumerable string key as spread
 * does (symbol keys, which JSON never has, are left out).
 */
export function copyOwn<T extends object>(source: T): T {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const value = (source as Record<string, unknown>)[key];
    if (key === "__proto__") Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
    else copy[key] = value;
  }
  return copy as T;
}
