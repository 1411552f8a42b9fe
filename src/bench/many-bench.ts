/**
 * Many components on one machine: 1,000 distinct HTTP sources of one owner,
 * and 100 owners with 10 each, hit round-robin at 100 and at 1,000 requests
 * per second in all. What it shows is whether a machine keeps hundreds of
 * components warm at once (a runner serves many components of one owner;
 * owners never share one) and what that costs in memory.
 */
import { startBenchServer, type BenchServer } from "./bench-server.js";
import { openLoop } from "./open-loop.js";
import { descendantsMemory } from "./process-memory.js";
import { quantile, type BenchRow } from "./table.js";

const SECONDS = Number(process.env.RUNNEL_BENCH_SECONDS ?? 8);
/** Sources in each scenario (RUNNEL_BENCH_MANY scales it down for a quick look). */
const SOURCES = Number(process.env.RUNNEL_BENCH_MANY ?? 1_000);
const RATES = [100, 1_000] as const;
/** The memory all runners may use together, as the target sets it. */
const RUNNER_MEMORY_MB = 2_048;
const BODY = JSON.stringify({ id: 1, message: "hello" });
/** Requests in flight while each source is hit once to load it. */
const WARM_UP_CONCURRENCY = 8;

/** Each source's code differs (its own bundle, its own module), as distinct components' do. */
function sourceCode(n: number): string {
  return `module.exports = {
  name: "Many ${n}", version: "1",
  props: { http: { type: "$.interface.http" } },
  async run(event) { this.$emit({ source: ${n}, body: event.body }, { summary: "request" }); },
};`;
}

interface Scenario {
  name: string;
  owners: number;
}

export async function benchManyComponents(): Promise<BenchRow[]> {
  const scenarios: Scenario[] = [
    { name: `${SOURCES} sources of one owner`, owners: 1 },
    { name: `${SOURCES / 10} owners x 10 sources`, owners: SOURCES / 10 },
  ];
  // RUNNEL_BENCH_MANY_SCENARIO=one or =owners runs only that one.
  const only = process.env.RUNNEL_BENCH_MANY_SCENARIO;
  const rows: BenchRow[] = [];
  for (const scenario of scenarios) {
    if (only === "one" && scenario.owners !== 1) continue;
    if (only === "owners" && scenario.owners === 1) continue;
    rows.push(...(await runScenario(scenario)));
  }
  return rows;
}

async function runScenario(scenario: Scenario): Promise<BenchRow[]> {
  // A server of its own per scenario: the second starts with no runners left by the first.
  const bench = await startBenchServer("sqlite", { env: { RUNNEL_RUNNER_MEMORY_MB: String(RUNNER_MEMORY_MB) } });
  try {
    const keys = scenario.owners === 1 ? [bench.key] : await createOwners(bench, scenario.owners);
    const endpoints = await deployAll(bench, keys, SOURCES / keys.length);
    const rows: BenchRow[] = [];
    const cold = await hitEachOnce(endpoints);
    rows.push({ benchmark: `${scenario.name}: first request of each (loads it)`, p50Ms: cold.p50Ms, p99Ms: cold.p99Ms, note: `${WARM_UP_CONCURRENCY} in flight; ${memoryNote()}` });
    for (const rate of RATES) {
      // Long enough that every source is hit at least once in the measured run.
      const seconds = Math.max(SECONDS, Math.ceil(endpoints.length / rate));
      const figures = await openLoop(endpoints, { rate, seconds, body: BODY });
      const target = rate === 100 ? (scenario.owners === 1 ? "; target p99 < 50 ms" : "; target p99 < 250 ms") : "";
      rows.push({ benchmark: `${scenario.name}: round-robin at ${rate} req/s`, ...figures, note: `${memoryNote()}${target}; errors ${figures.errors}, non-2xx ${figures.non2xx}` });
    }
    return rows;
  } finally {
    await bench.close();
  }
}

function memoryNote(): string {
  const memory = descendantsMemory();
  return `runners: ${memory.processes} processes, ${Math.round(memory.pssMb)} MB PSS (budget ${RUNNER_MEMORY_MB} MB)`;
}

async function createOwners(bench: BenchServer, count: number): Promise<string[]> {
  return inBatches(
    Array.from({ length: count }, (_, index) => index),
    async (index) => {
      const created = await post(bench, bench.key, "/v1/users", { username: `owner${index}` });
      const key = (created as { data?: { api_key?: { key?: string } } }).data?.api_key?.key;
      if (!key) throw new Error(`the bench could not create owner ${index}: ${JSON.stringify(created)}`);
      return key;
    },
  );
}

/** `perOwner` distinct sources for each key; their endpoints, interleaved so that round-robin visits every owner in turn. */
async function deployAll(bench: BenchServer, keys: string[], perOwner: number): Promise<string[]> {
  const jobs = keys.flatMap((key, owner) => Array.from({ length: perOwner }, (_, index) => ({ key, n: index * keys.length + owner })));
  jobs.sort((a, b) => a.n - b.n);
  return inBatches(jobs, async ({ key, n }) => {
    const deployed = await post(bench, key, "/v1/sources", { component_code: sourceCode(n), name: `many-${n}` });
    const endpoint = (deployed as { data?: { endpoint_url?: string } }).data?.endpoint_url;
    if (!endpoint) throw new Error(`the bench could not deploy source ${n}: ${JSON.stringify(deployed)}`);
    return endpoint;
  });
}

async function post(bench: BenchServer, key: string, path: string, body: unknown): Promise<unknown> {
  const answer = await fetch(`${bench.server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return answer.json();
}

/** Each endpoint once, a few at a time; the latency of each. */
async function hitEachOnce(endpoints: string[]): Promise<{ p50Ms: number; p99Ms: number }> {
  const times = await inBatches(endpoints, async (endpoint) => {
    const started = performance.now();
    const answer = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
    await answer.arrayBuffer();
    if (answer.status !== 200) throw new Error(`a bench source answered ${answer.status} to its first request`);
    return performance.now() - started;
  });
  times.sort((a, b) => a - b);
  return { p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99) };
}

/** Maps `items` with WARM_UP_CONCURRENCY calls in flight, keeping their order. */
async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: WARM_UP_CONCURRENCY }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}
