import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ChurningMap, ChurningSet, RENEW_AFTER_DELETIONS } from "./churning-map.js";

describe("ChurningMap", () => {
  it("keeps its entries, in insertion order, across the renewals its deletions make", () => {
    const map = new ChurningMap<number, string>();
    for (let key = 0; key < 10; key++) map.set(key, `v${key}`);
    // Enough entries coming and going for several renewals, with the first ten there throughout.
    for (let round = 0; round < RENEW_AFTER_DELETIONS * 5; round++) {
      map.set(1_000 + round, "passing");
      expect(map.delete(1_000 + round)).toBe(true);
    }
    expect(map.size).toBe(10);
    expect(map.keys()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(map.get(3)).toBe("v3");
    expect(map.has(1_000)).toBe(false);
    expect(map.delete(1_000)).toBe(false);
    map.set(3, "changed");
    expect(map.entries()).toContainEqual([3, "changed"]);
    expect([...map].length).toBe(10);
    map.clear();
    expect(map.size).toBe(0);
  });

  it("can be changed while it is gone through: a pass sees the entries as they were when it began", () => {
    const map = new ChurningMap<string, number>();
    for (let index = 0; index < RENEW_AFTER_DELETIONS * 2; index++) map.set(`k${index}`, index);
    const seen: string[] = [];
    for (const [key] of map) {
      seen.push(key);
      map.delete(key);
    }
    expect(seen).toHaveLength(RENEW_AFTER_DELETIONS * 2);
    expect(map.size).toBe(0);
  });
});

describe("ChurningSet", () => {
  it("keeps its values across renewals and answers as a Set does", () => {
    const set = new ChurningSet<object>();
    const kept = [{}, {}, {}];
    for (const value of kept) set.add(value);
    for (let round = 0; round < RENEW_AFTER_DELETIONS * 3; round++) {
      const passing = {};
      set.add(passing);
      expect(set.delete(passing)).toBe(true);
    }
    expect(set.size).toBe(3);
    expect(set.values()).toEqual(kept);
    expect(set.has(kept[1]!)).toBe(true);
    expect(set.delete({})).toBe(false);
    expect([...set]).toEqual(kept);
  });
});

/**
 * What it is for, on the Node.js that runs this: a registry that lives long
 * (old) with entries coming and going. A child process runs the same churn
 * through a plain Map and through a ChurningMap, with V8's GC tracing on,
 * and reports the bytes promoted by its last scavenges.
 */
describe("ChurningMap, against V8's young generation", () => {
  it("promotes none of what passes through it, where a plain Map, once old, promotes it", () => {
    const script = fileURLToPath(new URL("./churning-map-promotion.fixture.mjs", import.meta.url));
    // The built module: `npm test` builds first (a test run alone needs `npm run build`).
    const churningModule = new URL("../../dist/domain/churning-map.js", import.meta.url).href;
    const promoted = (kind: string) => {
      const output = execFileSync(process.execPath, ["--trace-gc-nvp", script, kind, churningModule], { encoding: "utf8", maxBuffer: 64 << 20 });
      const amounts = [...output.matchAll(/gc=s .*?promoted=(\d+)/g)].map((match) => Number(match[1]));
      const last = amounts.slice(-20);
      return last.reduce((sum, amount) => sum + amount, 0) / Math.max(1, last.length);
    };
    const plain = promoted("plain");
    const churning = promoted("churning");
    // Plain: hundreds of KB a scavenge (755 KB in session 29's measurement); churning: next to none.
    expect(plain).toBeGreaterThan(100_000);
    expect(churning).toBeLessThan(plain / 20);
  }, 60_000);
});
