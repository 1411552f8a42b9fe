import { performance } from "node:perf_hooks";

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}

/**
 * Sends `total` requests with `concurrency` in flight and measures each one.
 * Bounded by count, loopback only: a benchmark, not a load test of anything else.
 */
export async function runLoad(send: () => Promise<Response>, total: number, concurrency: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const begin = performance.now();
        const response = await send();
        await response.arrayBuffer();
        latencies.push(performance.now() - begin);
        if (!response.ok) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { requests: total, seconds, perSecond: total / seconds, p50Ms: at(0.5), p99Ms: at(0.99), failures };
}
