import { describe, expect, it } from "vitest";
import { dueTimeOf } from "./bullmq-job-queue.js";

describe("dueTimeOf", () => {
  it("reads the due time from the scheduler's job id, not from when the job was made", () => {
    expect(dueTimeOf({ id: "repeat:dc_abc:1795754733458", timestamp: 1795754732466, delay: 0, opts: {} })).toBe(1795754733458);
  });
  it("reads a catch-up tick's due time from its id, named as the scheduler's own are", () => {
    expect(dueTimeOf({ id: "catch-up:dc_abc:1795754733458", timestamp: 1, delay: 0, opts: {} })).toBe(1795754733458);
  });
  it("falls back to when it was made plus its delay for a job named otherwise", () => {
    expect(dueTimeOf({ id: "custom", timestamp: 1_000, delay: 500, opts: {} })).toBe(1_500);
  });
});
