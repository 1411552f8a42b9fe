import { execFile } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startBenchServer } from "./bench-server.js";
import { runLoad } from "./http-load.js";
import { quantile, type BenchRow } from "./table.js";

const REQUESTS = Number(process.env.RUNNEL_BENCH_REQUESTS ?? 5_000);

/** The REST API's own cost: an authenticated read and a write, on one store. */
export async function benchApi(store: "sqlite" | "postgres"): Promise<BenchRow[]> {
  const bench = await startBenchServer(store);
  const headers = { authorization: `Bearer ${bench.key}` };
  const me = () => fetch(`${bench.server.url}/v1/users/me`, { headers });
  const createKey = () =>
    fetch(`${bench.server.url}/v1/users/me/api_keys`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{}" });
  try {
    await runLoad(me, 500, 8); // warm-up
    const rows: Array<[string, Awaited<ReturnType<typeof runLoad>>]> = [
      ["GET /v1/users/me, 1 in flight", await runLoad(me, REQUESTS / 5, 1)],
      ["GET /v1/users/me, 32 in flight", await runLoad(me, REQUESTS, 32)],
      ["POST /v1/users/me/api_keys (a write), 8 in flight", await runLoad(createKey, REQUESTS / 5, 8)],
    ];
    return rows.map(([name, result]) => ({ benchmark: `${name} [${store}]`, ...result, note: `fetch in the same process; ${result.failures} failed` }));
  } finally {
    await bench.close();
  }
}

export async function benchCliStart(): Promise<BenchRow> {
  const bin = fileURLToPath(new URL("../../bin/runnel.js", import.meta.url));
  const run = promisify(execFile);
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const begin = performance.now();
    await run(process.execPath, [bin, "--version"]);
    times.push(performance.now() - begin);
  }
  times.sort((a, b) => a - b);
  return { benchmark: "runnel --version (CLI start, child process)", p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99) };
}
