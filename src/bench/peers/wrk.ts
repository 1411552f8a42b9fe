import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { LoadFigures } from "../autocannon.js";

const run = promisify(execFile);

/** wrk's durations: "812.00us", "5.96ms", "1.02s", "2.00m". */
const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * POSTs `body` as JSON to `url` with wrk for `seconds`: two threads (one per
 * core of the machines this runs on), `connections` kept open. wrk is native
 * and uses little CPU per request, so more of the machine is left to the
 * server under test than with a Node load generator.
 */
export async function wrk(url: string, options: { seconds: number; connections: number; body: string }): Promise<LoadFigures> {
  const dir = await mkdtemp(join(tmpdir(), "runnel-bench-wrk-"));
  try {
    const script = join(dir, "post.lua");
    await writeFile(script, `wrk.method = "POST"\nwrk.body = ${luaString(options.body)}\nwrk.headers["Content-Type"] = "application/json"\n`);
    const args = ["-t2", `-c${options.connections}`, `-d${options.seconds}s`, "--latency", "-s", script, url];
    const { stdout } = await run("wrk", args, { maxBuffer: 1 << 20 });
    return parseWrk(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A Lua string literal: JSON's escapes are not all Lua's, so every byte outside plain ASCII is written as \ddd (three digits, so a digit after it is not read as part of it). */
function luaString(text: string): string {
  return `"${[...Buffer.from(text)].map((byte) => (byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, "0")}`)).join("")}"`;
}

/**
 * Reads wrk's --latency report. Its "Non-2xx or 3xx responses" counts answers
 * of 400 and up, which is what non2xx means for a route that answers 200.
 */
export function parseWrk(report: string): LoadFigures {
  const number = (pattern: RegExp, fallback?: number): number => {
    const match = pattern.exec(report);
    if (match) return Number(match[1]);
    if (fallback !== undefined) return fallback;
    throw new Error(`wrk's report has no ${pattern.source}:\n${report}`);
  };
  const percentile = (p: number): number => {
    const match = new RegExp(`^\\s*${p}(?:\\.0+)?%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, "m").exec(report);
    if (!match) throw new Error(`wrk's report has no ${p}% latency:\n${report}`);
    return Number(match[1]) * UNIT_MS[match[2]!]!;
  };
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(report);
  return {
    perSecond: number(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    errors: socket ? socket.slice(1, 5).reduce((total, count) => total + Number(count), 0) : 0,
    non2xx: number(/Non-2xx or 3xx responses:\s+(\d+)/, 0),
  };
}
