import { describe, expect, it } from "vitest";
import { classifyExit, type RunnerExit } from "./exit-classification.js";

const base: RunnerExit = { code: null, signal: null, stderrTail: "", stoppedBy: undefined, spawnError: undefined, timeoutMs: 1_000, memoryMb: 128 };

describe("classifyExit under RLIMIT_AS", () => {
  it("names a native abort of an address-space-limited runner as running out of memory", () => {
    const error = classifyExit({ ...base, signal: "SIGABRT", stderrTail: "node[12]: ... Assertion failed: (x509) != nullptr", addressSpaceLimited: true, wholeLimitMb: 192 });
    expect(error).toMatchObject({ code: "OutOfMemory", message: expect.stringContaining("memory limit of 192 MB") });
    expect(error.message).toContain("x509");
  });

  it("keeps an abort a crash where memory is limited otherwise (cgroups tell the kernel's kill apart)", () => {
    expect(classifyExit({ ...base, signal: "SIGABRT", stderrTail: "Assertion failed" }).code).toBe("RunnerCrashed");
  });

  it("keeps the host's own stops what they were", () => {
    expect(classifyExit({ ...base, signal: "SIGKILL", stoppedBy: "timeout", addressSpaceLimited: true }).code).toBe("Timeout");
  });
});
