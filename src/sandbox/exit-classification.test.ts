import { describe, expect, it } from "vitest";
import { classifyExit, type RunnerExit } from "./exit-classification.js";

const base: RunnerExit = { code: null, signal: null, stderrTail: "", stoppedBy: undefined, spawnError: undefined, timeoutMs: 1_000, startLimitMs: 20_000, memoryMb: 128 };

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

describe("classifyExit when the time limit and the memory limit meet", () => {
  const v8Oom = "<--- Last few GCs --->\n[7:0x1]  2994 ms: Mark-Compact 64.7 (97.8) -> 64.6 (97.1) MB\n\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n";

  it("names a runner that was dying of its heap limit when its time ran out as out of memory", () => {
    expect(classifyExit({ ...base, signal: "SIGKILL", stoppedBy: "timeout", stderrTail: v8Oom, memoryMb: 64 })).toMatchObject({ code: "OutOfMemory", message: expect.stringContaining("heap limit 64 MB") });
  });

  it("names a runner the kernel's OOM killer took as out of memory, though its time ran out too", () => {
    expect(classifyExit({ ...base, signal: "SIGKILL", stoppedBy: "timeout", memoryKilled: true, wholeLimitMb: 192 }).code).toBe("OutOfMemory");
  });

  it("keeps a timeout a timeout when nothing says memory", () => {
    expect(classifyExit({ ...base, signal: "SIGKILL", stoppedBy: "timeout", stderrTail: "some other output" }).code).toBe("Timeout");
  });
});
