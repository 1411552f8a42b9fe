import Fastify from "fastify";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSandbox } from "../sandbox/sandbox.js";
import { autocannon, type LoadFigures } from "./autocannon.js";
import { startBenchServer } from "./bench-server.js";
import { quantile, type BenchRow } from "./table.js";

const SECONDS = Number(process.env.RUNNEL_BENCH_SECONDS ?? 5);
/** Load before each measured run, not counted: sustained throughput, not the first second's JIT and runner start. */
const WARM_UP_SECONDS = 1;
const CONNECTIONS = Number(process.env.RUNNEL_BENCH_CONNECTIONS ?? 32);
/** Enough connections that batching is never short of requests: the server's throughput at saturation, for comparison. */
const SATURATING_CONNECTIONS = 128;
const BODY = JSON.stringify({ id: 1, message: "hello" });

const EMIT_EVERY_REQUEST = `module.exports = {
  name: "Bench webhook", version: "1",
  props: { http: { type: "$.interface.http" } },
  async run(event) { this.$emit(event.body, { summary: "request" }); },
};`;

/** As most real webhook sources do: a line in its logs for each request, written with its event. */
const LOG_AND_EMIT_EVERY_REQUEST = EMIT_EVERY_REQUEST.replace("async run(event) {", 'async run(event) { console.log("received", event.body.id);');

/** POSTs to `url` for WARM_UP_SECONDS, then measures SECONDS. */
async function sustained(url: string, connections = CONNECTIONS) {
  await autocannon(url, { seconds: WARM_UP_SECONDS, connections, method: "POST", body: BODY });
  return autocannon(url, { seconds: SECONDS, connections, method: "POST", body: BODY });
}

function ofReference(figures: { perSecond: number; errors: number; non2xx: number }, reference: { perSecond: number }, target = ""): string {
  return `${((figures.perSecond / reference.perSecond) * 100).toFixed(0)}% of the reference${target}; errors ${figures.errors}, non-2xx ${figures.non2xx}`;
}

async function deployHttpSource(bench: Awaited<ReturnType<typeof startBenchServer>>, code: string): Promise<string> {
  const deployed = await fetch(`${bench.server.url}/v1/sources`, {
    method: "POST",
    headers: { authorization: `Bearer ${bench.key}`, "content-type": "application/json" },
    body: JSON.stringify({ component_code: code }),
  });
  return ((await deployed.json()) as { data: { endpoint_url: string } }).data.endpoint_url;
}

/** Reference and source take turns this many times; the round with the median ratio is reported (on a shared VM the rounds of one run spread by 15 points or more; 5 make the median steadier than 3). */
const ROUNDS = 5;

/**
 * The HTTP source against a bare Fastify route, in the same run, and the
 * ratio between them. The two take turns (ROUNDS times, SECONDS each after a
 * warm-up), because a shared VM's speed drifts over a run by more than the
 * difference being measured; the round with the median ratio is reported,
 * with the range of all rounds.
 */
export async function benchHttpSource(): Promise<BenchRow[]> {
  const bare = Fastify();
  bare.post("/hook", async () => ({ success: true }));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/hook`;
  const bench = await startBenchServer("sqlite");
  try {
    const endpoint = await deployHttpSource(bench, EMIT_EVERY_REQUEST);
    const rounds: Array<{ reference: LoadFigures; source: LoadFigures; ratio: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const reference = await sustained(bareUrl);
      const source = await sustained(endpoint);
      rounds.push({ reference, source, ratio: source.perSecond / reference.perSecond });
    }
    const ratios = rounds.map((round) => round.ratio).sort((a, b) => a - b);
    const median = rounds.find((round) => round.ratio === ratios[Math.floor(ROUNDS / 2)])!;
    const percent = (ratio: number) => `${(ratio * 100).toFixed(0)}%`;
    const logging = await sustained(await deployHttpSource(bench, LOG_AND_EMIT_EVERY_REQUEST));
    const bareSaturated = await sustained(bareUrl, SATURATING_CONNECTIONS);
    const saturated = await sustained(endpoint, SATURATING_CONNECTIONS);
    return [
      { benchmark: `bare Fastify POST route (reference), ${CONNECTIONS} connections`, ...median.reference, note: `autocannon, own process; median of ${ROUNDS} rounds` },
      {
        benchmark: `HTTP source emitting every request, ${CONNECTIONS} connections`,
        ...median.source,
        note: `${ofReference(median.source, median.reference, " (target >= 40%)")}; rounds ${ratios.map(percent).join(", ")}`,
      },
      { benchmark: `HTTP source logging a line and emitting, ${CONNECTIONS} connections`, ...logging, note: ofReference(logging, median.reference) },
      { benchmark: `bare Fastify POST route (reference), ${SATURATING_CONNECTIONS} connections`, ...bareSaturated, note: "autocannon, own process" },
      { benchmark: `HTTP source emitting every request, ${SATURATING_CONNECTIONS} connections`, ...saturated, note: ofReference(saturated, bareSaturated) },
    ];
  } finally {
    await bench.close();
    await bare.close();
  }
}

/** A warm runner's round trip for a run that does nothing: the sandbox's own cost per invocation. */
export async function benchWarmInvocation(): Promise<BenchRow> {
  const dir = await mkdtemp(join(tmpdir(), "runnel-bench-sandbox-"));
  // A folder of its own for the bundle, as the server gives each (a runner is given the bundle's whole folder).
  await mkdir(join(dir, "bundle"));
  const file = join(dir, "bundle", "component.cjs");
  await writeFile(file, "module.exports = { name: 'noop', version: '1', async run() {} };");
  const sandbox = createSandbox({ workDir: join(dir, "work") });
  try {
    const request = { bundle: { id: "noop", ownerId: "u_bench", file }, call: { kind: "run" as const, event: { n: 1 } }, props: {}, dbProps: [], db: {}, limits: { timeoutMs: 5_000, memoryMb: 256, maxLogBytes: 1 << 20 } };
    for (let i = 0; i < 200; i++) {
      const warm = await sandbox.invoke(request);
      if (!warm.ok) throw new Error(`the bench's no-op call failed: ${warm.error?.message}`);
    }
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < 3_000; i++) {
      const begin = performance.now();
      await sandbox.invoke(request);
      times.push(performance.now() - begin);
    }
    const seconds = (performance.now() - started) / 1000;
    times.sort((a, b) => a - b);
    return {
      benchmark: "warm invocation round trip (sandbox, no-op run)",
      perSecond: times.length / seconds,
      p50Ms: quantile(times, 0.5),
      p99Ms: quantile(times, 0.99),
      note: "target p50 < 0.3 ms",
    };
  } finally {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** From POST /v1/sources with new code to the endpoint's 200 for the first event: bundle, cold runner, hooks, event. */
export async function benchDeployToFirstEvent(): Promise<BenchRow> {
  const bench = await startBenchServer("sqlite");
  try {
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      // A different bundle each time (esbuild drops comments, so the change must be code): new code, loaded in
      // the owner's warm runner (the first one takes the spare).
      const code = EMIT_EVERY_REQUEST.replace('version: "1"', `version: "1.${i}"`);
      const begin = performance.now();
      const endpoint = await deployHttpSource(bench, code);
      const first = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
      await first.arrayBuffer();
      if (first.status !== 200) throw new Error(`the first event failed: ${first.status}`);
      times.push(performance.now() - begin);
    }
    times.sort((a, b) => a - b);
    return { benchmark: "deploy to first event (new code, no packages)", p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99), note: "20 deploys; target p50 < 50 ms" };
  } finally {
    await bench.close();
  }
}
