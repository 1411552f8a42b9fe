import { describe, expect, it } from "vitest";
import { ExpiringCache } from "./expiring-cache.js";

describe("ExpiringCache.readThrough", () => {
  it("keeps what it read, unless the key was forgotten while it was being read (another process's change came meanwhile)", async () => {
    const cache = new ExpiringCache<string, string>({ ttlMs: 1_000, maxEntries: 10 });
    expect(await cache.readThrough("wf", async () => "v1")).toBe("v1");
    expect(cache.get("wf")).toBe("v1");

    cache.delete("wf");
    let finishRead!: (value: string) => void;
    const reading = cache.readThrough("wf", () => new Promise<string>((resolve) => (finishRead = resolve)));
    // The "changed" message arrives while the old row is on its way back.
    cache.delete("wf");
    finishRead("v1 (read before the change)");
    expect(await reading).toBe("v1 (read before the change)");
    expect(cache.get("wf")).toBeUndefined();

    // A clear counts too.
    const again = cache.readThrough("wf", async () => {
      cache.clear();
      return "stale";
    });
    expect(await again).toBe("stale");
    expect(cache.get("wf")).toBeUndefined();
    expect(await cache.readThrough("wf", async () => "v2")).toBe("v2");
    expect(cache.get("wf")).toBe("v2");
  });
});
