import { describe, expect, it } from "vitest";
import { sendIdempotencyKey, sendRetryDelay } from "./durable-sends.js";
import { isIdOf, keyedId } from "./ids.js";

describe("durable sends", () => {
  it("keys a send by its run and its place in the run record", () => {
    expect(sendIdempotencyKey("run_abc", 0, 1)).toBe("run_abc:0:1");
    expect(sendIdempotencyKey("run_abc", 1, 0)).not.toBe(sendIdempotencyKey("run_abc", 0, 1));
  });

  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [4, null],
  ])("waits after failed attempt %i: %s ms (null: given up)", (attempt, wait) => {
    expect(sendRetryDelay(attempt, { maxAttempts: 4, baseDelayMs: 100 })).toBe(wait);
  });

  it("never waits more than an hour", () => {
    expect(sendRetryDelay(30, { maxAttempts: 100, baseDelayMs: 10_000 })).toBe(3_600_000);
  });

  it("makes the same mail id from the same key and time, another from another key", () => {
    const id = keyedId("mail", 1_700_000_000_000, "run_abc:0:0");
    expect(isIdOf("mail", id)).toBe(true);
    expect(keyedId("mail", 1_700_000_000_000, "run_abc:0:0")).toBe(id);
    expect(keyedId("mail", 1_700_000_000_000, "run_abc:0:1")).not.toBe(id);
  });
});
