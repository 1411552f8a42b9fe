/**
 * The runner's A/B bench: two builds of Runnel (A, B: their dist/ folders),
 * each serving the peers bench's 3-step workflow in a process of its own,
 * measured in alternating rounds (A, B, A, B…) under the same wrk load, in
 * one sitting. A shared machine's speed drifts by more than the changes
 * measured, so each round's B is compared with the A just before it, and CPU
 * per run (server and runners apart, from /proc) is reported beside the
 * throughput: it moves far less with the machine's other load.
 *
 *   node dist/bench/runner/ab-bench.js <A dist> <B dist> [rounds]
 *
 * RUNNEL_BENCH_SECONDS sets each measured run (default 8); each is preceded by
 * a 5 s warm-up. Set RUNNEL_RUNNER_CPU_PROF to profile the runners too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { processTree, withCpuPerRequest } from "../process-cpu.js";
import { wrk } from "../peers/wrk.js";
import { BODY, CONNECTIONS, SECONDS } from "../workflow-bench.js";

const WARM_UP_SECONDS = 5;

interface Served {
  name: string;
  url: string;
  pid: number;
  child: ChildProcess;
}

interface Measured {
  perSecond: number;
  p99Ms: number;
  serverUs: number;
  runnersUs: number;
  errors: number;
}

async function serve(name: string, dist: string): Promise<Served> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "workflow-serve.js"), dist], { stdio: ["ignore", "pipe", "inherit"], env: process.env });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, "line")) as [string];
  const { url, pid } = JSON.parse(line) as { url: string; pid: number };
  return { name, url, pid, child };
}

async function measure(target: Served): Promise<Measured> {
  await wrk(target.url, { seconds: WARM_UP_SECONDS, connections: CONNECTIONS, body: BODY });
  const runners = processTree(target.pid).filter((pid) => pid !== target.pid);
  const figures = await withCpuPerRequest({ server: [target.pid], runners }, SECONDS, () => wrk(target.url, { seconds: SECONDS, connections: CONNECTIONS, body: BODY }));
  const { server = 0, runners: runnersUs = 0 } = figures.cpuUsPerRequest;
  return { perSecond: figures.perSecond, p99Ms: figures.p99Ms, serverUs: server, runnersUs, errors: figures.errors + figures.non2xx };
}

async function stop(target: Served): Promise<void> {
  const gone = once(target.child, "exit");
  target.child.kill("SIGTERM");
  const timer = setTimeout(() => target.child.kill("SIGKILL"), 20_000);
  await gone;
  clearTimeout(timer);
}

const [distA, distB, roundsArg] = process.argv.slice(2);
if (!distA || !distB) {
  console.error("usage: node dist/bench/runner/ab-bench.js <A dist folder> <B dist folder> [rounds]");
  process.exit(2);
}
const rounds = Number(roundsArg ?? 3);
const a = await serve("A", resolve(distA));
const b = await serve("B", resolve(distB));
const fixed = (value: number, digits = 0) => value.toFixed(digits);
try {
  console.log(`| round | A runs/s | B runs/s | B÷A runs/s | A server µs/run | B server µs/run | B÷A server | A runners µs/run | B runners µs/run | B÷A runners | load average |`);
  console.log(`|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
  for (let round = 1; round <= rounds; round++) {
    const load = fixed(loadavg()[0]!, 1);
    const ra = await measure(a);
    const rb = await measure(b);
    if (ra.errors + rb.errors > 0) console.error(`round ${round}: errors or non-2xx answers: A ${ra.errors}, B ${rb.errors}`);
    console.log(
      `| ${round} | ${fixed(ra.perSecond)} | ${fixed(rb.perSecond)} | ${fixed(rb.perSecond / ra.perSecond, 2)} | ${fixed(ra.serverUs)} | ${fixed(rb.serverUs)} | ${fixed(rb.serverUs / ra.serverUs, 2)} | ${fixed(ra.runnersUs)} | ${fixed(rb.runnersUs)} | ${fixed(rb.runnersUs / ra.runnersUs, 2)} | ${load} |`,
    );
  }
} finally {
  await Promise.allSettled([stop(a), stop(b)]);
}
