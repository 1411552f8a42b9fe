import { autocannon } from "./autocannon.js";
import { openLoop, type OpenLoopFigures } from "./open-loop.js";
import { startBenchServer, type BenchServer } from "./bench-server.js";
import { freePort } from "./peers/child-server.js";
import { startFastify } from "./peers/fastify-server.js";
import { processTree, withCpuPerRequest, withThreadSchedule, type MainThreadShare } from "./process-cpu.js";
import { quantile, type BenchRow } from "./table.js";

/** The length of each load run and its connections (the peers bench uses the same). */
export const SECONDS = Number(process.env.RUNNEL_BENCH_SECONDS ?? 8);
export const CONNECTIONS = 32;
/** The request body of every workflow bench (and of the peers bench, which must send the same). */
export const BODY = JSON.stringify({ id: 1, message: "hello" });

const PASS_ON = "export default defineComponent({ props: { value: { type: 'any' } }, async run() { return this.value; } })";
const RESPOND = "export default defineComponent({ async run({ steps, $ }) { await $.respond({ status: 200, body: { ok: true } }); } })";

/** An HTTP-triggered workflow of `steps` code steps: each passes the body on, the last responds. */
function workflowBody(name: string, steps: number) {
  const list: Array<Record<string, unknown>> = [];
  for (let i = 0; i < steps - 1; i++) {
    const previous = i === 0 ? "{{steps.trigger.event.body}}" : `{{steps.s${i - 1}.$return_value}}`;
    list.push({ name: `s${i}`, code: PASS_ON, props: { value: previous } });
  }
  list.push({ name: "reply", code: RESPOND });
  return { name, trigger: { type: "http" }, respond: "workflow", steps: list };
}

/** Creates the workflow, warms it with 50 requests and answers its endpoint URL. */
export async function deployWorkflow(bench: BenchServer, name: string, steps: number): Promise<string> {
  const created = await fetch(`${bench.server.url}/v1/workflows`, {
    method: "POST",
    headers: { authorization: `Bearer ${bench.key}`, "content-type": "application/json" },
    body: JSON.stringify(workflowBody(name, steps)),
  });
  const body = (await created.json()) as { data?: { trigger: { endpoint_url: string } }; error?: unknown };
  if (!body.data) throw new Error(`the bench workflow could not be created: ${JSON.stringify(body.error)}`);
  const endpoint = body.data.trigger.endpoint_url;
  // Warm: the runner loads the workflow bundle on the first run.
  for (let i = 0; i < 50; i++) {
    const answer = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
    if (answer.status !== 200) throw new Error(`the bench workflow answered ${answer.status}: ${await answer.text()}`);
  }
  return endpoint;
}

/**
 * Workflows end to end: an HTTP request, its event, the durable delivery, the
 * run of three code steps in the sandbox, `$.respond` back to the caller, and
 * the run recorded. Peak rate, latency at half of it, and the cost of a step.
 */
export async function benchWorkflows(): Promise<BenchRow[]> {
  const bench = await startBenchServer("sqlite");
  try {
    const three = await deployWorkflow(bench, "three steps", 3);
    const peak = await autocannon(three, { seconds: SECONDS, connections: CONNECTIONS, method: "POST", body: BODY });
    const rate = Math.round(peak.perSecond / 2);
    // The server runs in this process; its runners below it (the load generator, started later, is not counted).
    const processes = { server: [process.pid], runners: processTree(process.pid).filter((pid) => pid !== process.pid) };
    const half = await withThreadSchedule(process.pid, () => withCpuPerRequest(processes, SECONDS, () => openLoop(three, { rate, seconds: SECONDS, body: BODY })));
    const reference = await fastifyAt(rate);
    const one = await deployWorkflow(bench, "one step", 1);
    const eleven = await deployWorkflow(bench, "eleven steps", 11);
    const oneAlone = await sequential(one, 1_000);
    const elevenAlone = await sequential(eleven, 1_000);
    const perStepMs = (elevenAlone.p50Ms - oneAlone.p50Ms) / 10;
    const flags = (figures: { errors: number; non2xx: number }) => `errors ${figures.errors}, non-2xx ${figures.non2xx}`;
    return [
      { benchmark: `workflow, 3 code steps, last responds: peak, ${CONNECTIONS} connections`, ...peak, note: `runs/s; target >= 1000; ${flags(peak)}` },
      {
        benchmark: `same at half the peak rate (${rate}/s, an even stream)`,
        ...half,
        note: `target p50 < 2 ms, p99 < 10 ms; CPU a run: server ${us(half.cpuUsPerRequest.server)} µs, runners ${us(half.cpuUsPerRequest.runners)} µs; ${schedule(half)}p99 ${(half.p99Ms / Math.max(0.001, reference.p99Ms)).toFixed(1)}x the reference's; ${flags(half)}`,
      },
      {
        benchmark: `bare Fastify POST route at the same even rate (reference)`,
        ...reference,
        note: `own process, the same load generator; CPU a request ${us(reference.cpuUsPerRequest.process)} µs; ${schedule(reference)}${flags(reference)}`,
      },
      { benchmark: "workflow of 1 step, one request at a time", ...oneAlone, note: "1000 requests, timed in the process" },
      { benchmark: "workflow of 11 steps, one request at a time", ...elevenAlone, note: "1000 requests, timed in the process" },
      { benchmark: "per-step overhead (p50 of 11 steps - p50 of 1 step) / 10", p50Ms: perStepMs, note: "target < 0.5 ms" },
    ];
  } finally {
    await bench.close();
  }
}

/**
 * Bare Fastify under the same even stream: what latency and CPU a request
 * this machine gives a server at that rate. On a VM a server that sleeps
 * between requests pays more CPU for each the fewer there are
 * (docs/performance.md, session 28), so the workflow's figures at half its
 * peak are read against these, not against Fastify's peak.
 */
async function fastifyAt(rate: number): Promise<OpenLoopFigures & { cpuUsPerRequest: Record<string, number>; mainThread?: MainThreadShare }> {
  const fastify = await startFastify(await freePort(), BODY);
  try {
    await openLoop(fastify.url, { rate, seconds: 1, body: BODY });
    return await withThreadSchedule(fastify.pid, () => withCpuPerRequest({ process: [fastify.pid] }, SECONDS, () => openLoop(fastify.url, { rate, seconds: SECONDS, body: BODY })));
  } finally {
    await fastify.stop();
  }
}

const us = (value: number | undefined) => (value ?? 0).toFixed(0);

/** "main thread ran 62 %, waited for a CPU 9 %; ", or nothing where the kernel keeps no account (see withThreadSchedule). */
function schedule(figures: { mainThread?: MainThreadShare; perSecond: number }): string {
  const thread = figures.mainThread;
  if (!thread) return "";
  const wokeUp = thread.wokeUp === undefined ? "" : `, woke ${(thread.wokeUp / Math.max(1, figures.perSecond * SECONDS)).toFixed(1)} times a request`;
  return `main thread ran ${(thread.ran * 100).toFixed(0)} %, waited for a CPU ${(thread.waited * 100).toFixed(0)} %${wokeUp}; `;
}

/** One request at a time, each timed to the microsecond (autocannon reports whole milliseconds). */
async function sequential(endpoint: string, count: number): Promise<{ perSecond: number; p50Ms: number; p99Ms: number }> {
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const begin = performance.now();
    const answer = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
    await answer.arrayBuffer();
    if (answer.status !== 200) throw new Error(`the bench workflow answered ${answer.status}`);
    times.push(performance.now() - begin);
  }
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return { perSecond: count / seconds, p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99) };
}
