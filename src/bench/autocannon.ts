import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { promisify } from "node:util";

export interface LoadFigures {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

const run = promisify(execFile);

/**
 * Drives `url` with autocannon in a child process, so the load generator does
 * not share an event loop with the server it measures. Loopback only, bounded
 * by `seconds`.
 */
export async function autocannon(
  url: string,
  options: { seconds: number; connections: number; method?: string; body?: string; /** Requests per second over all connections (a fixed rate, for latency at a given load). */ rate?: number },
): Promise<LoadFigures> {
  const bin = createRequire(import.meta.url).resolve("autocannon/autocannon.js");
  const args = [bin, "-j", "-c", String(options.connections), "-d", String(options.seconds), "-m", options.method ?? "GET"];
  if (options.rate !== undefined) args.push("-R", String(Math.max(1, Math.round(options.rate))));
  if (options.body !== undefined) args.push("-H", "content-type=application/json", "-b", options.body);
  const { stdout } = await run(process.execPath, [...args, url], { maxBuffer: 16 * 1024 * 1024 });
  const result = JSON.parse(stdout) as { requests: { average: number }; latency: { p50: number; p99: number }; errors: number; non2xx: number };
  return { perSecond: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}
