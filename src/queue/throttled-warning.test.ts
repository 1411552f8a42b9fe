import pino from "pino";
import { describe, expect, it } from "vitest";
import { throttledWarning } from "./throttled-warning.js";

describe("throttledWarning", () => {
  it("logs the first of each message, then the same at most once per period with how many were left out", () => {
    const lines: Array<{ repeated?: number; err: { message: string } }> = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    let clock = 0;
    const warn = throttledWarning(logger, "queue error", 30_000, () => clock);
    for (let i = 0; i < 40; i++) warn(new Error("connect ECONNREFUSED 127.0.0.1:6390"));
    warn(new Error("another failure"));
    expect(lines.map((line) => line.err.message)).toEqual(["connect ECONNREFUSED 127.0.0.1:6390", "another failure"]);
    clock = 30_000;
    warn(new Error("connect ECONNREFUSED 127.0.0.1:6390"));
    expect(lines).toHaveLength(3);
    expect(lines[2]!.repeated).toBe(39);
  });
});
