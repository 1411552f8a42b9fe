import { describe, expect, it } from "vitest";
import { WakeSignal } from "./wake-signal.js";

describe("WakeSignal", () => {
  it("ends a sleep on a wake, remembers a wake that came while awake, and times out otherwise", async () => {
    const signal = new WakeSignal();
    const sleeping = signal.sleep(10_000);
    signal.wake();
    expect(await sleeping).toBe(false);
    expect(signal.pending).toBe(true);
    signal.clear();
    expect(signal.pending).toBe(false);
    expect(await signal.sleep(5)).toBe(true);
    const interrupted = signal.sleep(10_000);
    signal.interrupt();
    expect(await interrupted).toBe(false);
    expect(signal.pending).toBe(false);
  });
});
