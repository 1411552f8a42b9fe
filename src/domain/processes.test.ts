import { describe, expect, it } from "vitest";
import { processStateOf } from "./processes.js";

describe("processStateOf", () => {
  it.each([
    { age: 0, interval: 5_000, state: "live" },
    { age: 30_000, interval: 5_000, state: "live" },
    { age: 30_001, interval: 5_000, state: "lost" },
    { age: 700, interval: 100, state: "lost" },
    { age: 500, interval: 100, state: "live" },
  ] as const)("a beat $age ms old at an interval of $interval ms is $state", ({ age, interval, state }) => {
    expect(processStateOf({ heartbeatAt: 1_000_000 - age, heartbeatIntervalMs: interval }, 1_000_000)).toBe(state);
  });
});
