import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { ServerProcess } from "../chaos/server-process.js";
import { ADMIN_KEY_FILE_NAME } from "../server/admin-key-file.js";
import { startBenchServer, POSTGRES_URL } from "./bench-server.js";
import { describeStatements, StatementCounter, type StatementsPerRun } from "./pg-statements.js";
import { cpuMsBetween, cpuSnapshot, processTree, serviceProcesses } from "./process-cpu.js";
import { freePort } from "./peers/child-server.js";
import { chooseLoadGenerator, type LoadGenerator } from "./peers/load.js";
import type { BenchRow } from "./table.js";
import { BODY, CONNECTIONS, deployWorkflow, SECONDS } from "./workflow-bench.js";

export const REDIS_URL = process.env.RUNNEL_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const WARM_UP_SECONDS = 3;
/** Worker processes per measured set-up. */
const WORKER_COUNTS = [1, 2, 4];

interface Cluster {
  apiUrl: string;
  key: string;
  pids: () => number[];
  /** The api process and what runs below it (its runners). */
  apiPids: () => number[];
  stop(): Promise<void>;
}

/**
 * One api process and `workers` worker processes (the real binary, `runnel
 * server --role …`) over a fresh PostgreSQL schema, the queue on Redis or on
 * PostgreSQL alone. The api process starts first and creates the admin.
 */
async function startCluster(queue: "redis" | "postgres", workers: number, extraEnv: Record<string, string> = {}): Promise<Cluster> {
  const schema = `runnel_scale_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const databaseUrl = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const namespace = `runnel_bench_${randomBytes(4).toString("hex")}`;
  const common = { DATABASE_URL: databaseUrl, RUNNEL_QUEUE: queue, REDIS_URL, RUNNEL_QUEUE_NAMESPACE: namespace, RUNNEL_LOG_LEVEL: "warn", RUNNEL_MAX_RUNNERS: "4", ...extraEnv };
  const dirs: string[] = [];
  const processes: ServerProcess[] = [];
  const start = async (role: "api" | "worker") => {
    const dataDir = await mkdtemp(join(tmpdir(), `runnel-scale-${role}-`));
    dirs.push(dataDir);
    // RUNNEL_BENCH_PROFILE=<dir>: each api and worker process writes a V8 CPU profile in <dir>/<role> when it stops (src/bench/runner/profile-summary.ts reads them).
    const profileDir = globalThis.process.env.RUNNEL_BENCH_PROFILE;
    const nodeArgs = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, role)}`] : [];
    const process = new ServerProcess({ dataDir, port: await freePort(), env: { ...common, RUNNEL_ROLE: role }, startTimeoutMs: 60_000, nodeArgs });
    processes.push(process);
    await process.start();
    return { process, dataDir };
  };
  try {
    const api = await start("api");
    const key = (await readFile(join(api.dataDir, ADMIN_KEY_FILE_NAME), "utf8")).trim();
    for (let i = 0; i < workers; i++) await start("worker");
    return {
      apiUrl: api.process.url,
      key,
      pids: () => processes.flatMap((one) => (one.pid === undefined ? [] : processTree(one.pid))),
      apiPids: () => (api.process.pid === undefined ? [] : processTree(api.process.pid)),
      async stop() {
        await Promise.allSettled(processes.map((one) => one.stop()));
        await Promise.allSettled(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
        await admin.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
        await dropQueueNamespace(queue, namespace, admin);
        await admin.end();
      },
    };
  } catch (error) {
    await Promise.allSettled(processes.map((one) => one.stop()));
    await admin.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
    await admin.end();
    throw error;
  }
}

/** What the queue kept of this cluster: BullMQ's schema on PostgreSQL, its keys on Redis. */
export async function dropQueueNamespace(queue: "redis" | "postgres", namespace: string, admin: pg.Client): Promise<void> {
  if (queue === "postgres") {
    await admin.query(`DROP SCHEMA IF EXISTS ${namespace} CASCADE`).catch(() => undefined);
    return;
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${namespace}:*`, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } catch {
    // A bench's leftovers are not worth failing the table for.
  } finally {
    redis.disconnect();
  }
}

/**
 * `npm run bench -- --scale`: the 3-step HTTP workflow that responds, on the
 * embedded server (the reference, in this run) and on 1 api + 1, 2 and 4
 * worker processes, with the queue on Redis and on PostgreSQL alone. Per-core
 * efficiency: runs per second per core-second of CPU all processes spent.
 * Set-ups can be named after it (`--scale redis:1 postgres:1`): the
 * embedded reference and those only.
 *
 * `RUNNEL_BENCH_ROUNDS=N` (with named set-ups) measures in turns: the
 * embedded server stays up beside each set-up's processes, and the two take
 * N rounds each, one after the other, so that both see the same drift of the
 * machine (back-to-back runs of this bench differ by up to 20 %, more than
 * most changes); each side's median is reported, and the median of the
 * rounds' ratios. `RUNNEL_BENCH_TOGGLE=NAME` adds a third side: the same
 * set-up again, with NAME=1 in its processes' environment (for code under
 * test that reads it). `RUNNEL_BENCH_STATEMENTS=1` adds PostgreSQL's
 * statements a run to each side's note (see pg-statements.ts).
 */
export async function benchScale(setups = process.argv.slice(3)): Promise<BenchRow[]> {
  const wanted = (queue: "redis" | "postgres", workers: number) => setups.length === 0 || setups.includes(`${queue}:${workers}`);
  const named = (["redis", "postgres"] as const).flatMap((queue) => WORKER_COUNTS.filter((workers) => wanted(queue, workers)).map((workers) => ({ queue, workers })));
  const load = chooseLoadGenerator();
  const rounds = process.env.RUNNEL_BENCH_ROUNDS === undefined ? undefined : Number(process.env.RUNNEL_BENCH_ROUNDS);
  const toggle = process.env.RUNNEL_BENCH_TOGGLE || undefined;
  if (rounds === undefined && toggle === undefined) return withCounter((counter) => benchApart(load, named, counter));
  if (setups.length === 0) throw new Error("RUNNEL_BENCH_ROUNDS and RUNNEL_BENCH_TOGGLE measure named set-ups in turns: name them (npm run bench -- --scale redis:1).");
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds >= 1)) throw new Error(`RUNNEL_BENCH_ROUNDS must be a whole number of 1 or more, not ${process.env.RUNNEL_BENCH_ROUNDS}.`);
  return withCounter(async (counter) => {
    const embedded = await startBenchServer("postgres");
    try {
      const reference: Side = { label: EMBEDDED_LABEL, url: await deployWorkflow(embedded, "three steps", 3), pids: () => processTree(process.pid) };
      const rows: BenchRow[] = [];
      for (const { queue, workers } of named) rows.push(...(await inTurns(load, queue, workers, reference, rounds ?? 6, toggle, counter)));
      return rows;
    } finally {
      await embedded.close();
    }
  });
}

/** Runs `bench` with a statement counter when RUNNEL_BENCH_STATEMENTS asks for one (null otherwise), closed after. */
async function withCounter<T>(bench: (counter: StatementCounter | null) => Promise<T>): Promise<T> {
  const counter = await StatementCounter.open(POSTGRES_URL);
  try {
    return await bench(counter);
  } finally {
    await counter?.close();
  }
}

/** A note's tail: PostgreSQL's statements a run, when counted. */
function statementsNote(measured: { statements: StatementsPerRun | null }): string {
  return measured.statements ? `; ${describeStatements(measured.statements)}` : "";
}

const EMBEDDED_LABEL = "embedded (one process, PostgreSQL): 3-step workflow that responds";

/** The embedded reference once, then each set-up alone (the reference closed: the set-ups have the machine to themselves). */
async function benchApart(load: LoadGenerator, named: Array<{ queue: "redis" | "postgres"; workers: number }>, counter: StatementCounter | null): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const embedded = await startBenchServer("postgres");
  let reference: number;
  try {
    const measured = await measure(load, { label: EMBEDDED_LABEL, url: await deployWorkflow(embedded, "three steps", 3), pids: () => processTree(process.pid) }, counter);
    const { figures, cpuUsPerRun, servicesUsPerRun } = measured;
    reference = figures.perSecond;
    rows.push({ benchmark: EMBEDDED_LABEL, ...figures, note: `reference; CPU ${Math.round(cpuUsPerRun)} µs/run, PostgreSQL and Redis ${Math.round(servicesUsPerRun)} µs/run${statementsNote(measured)}` });
  } finally {
    await embedded.close();
  }
  for (const { queue, workers } of named) {
    const cluster = await startCluster(queue, workers);
    try {
      const measured = await measure(load, await sideOn(cluster, setupName(queue, workers)), counter);
      const { figures, cpuUsPerRun, apiUsPerRun, servicesUsPerRun } = measured;
      rows.push({
        benchmark: setupName(queue, workers),
        ...figures,
        note: `${(figures.perSecond / reference).toFixed(2)}× embedded; CPU ${Math.round(cpuUsPerRun)} µs/run (all processes; the api ${Math.round(apiUsPerRun)}), PostgreSQL and Redis ${Math.round(servicesUsPerRun)} µs/run; errors ${figures.errors}, non-2xx ${figures.non2xx}${statementsNote(measured)}`,
      });
    } finally {
      await cluster.stop();
    }
  }
  return rows;
}

function setupName(queue: "redis" | "postgres", workers: number): string {
  return `1 api + ${workers} worker${workers > 1 ? "s" : ""}, queue on ${queue === "redis" ? "Redis" : "PostgreSQL alone"}`;
}

/** What is measured: a server's endpoint and the processes whose CPU counts. */
interface Side {
  label: string;
  url: string;
  pids: () => number[];
  apiPids?: () => number[];
}

/** A cluster with the workflow deployed through its api process. */
async function sideOn(cluster: Cluster, label: string): Promise<Side> {
  const url = await deployWorkflow({ server: { url: cluster.apiUrl }, key: cluster.key } as Parameters<typeof deployWorkflow>[0], "three steps", 3);
  return { label, url, pids: cluster.pids, apiPids: cluster.apiPids };
}

/** Throughput, and the CPU per run of Runnel's processes and of PostgreSQL's and Redis's (shared with whatever else runs). */
async function measure(load: LoadGenerator, side: Side, counter: StatementCounter | null) {
  await vacuumAsAutovacuumWould();
  await load.post(side.url, { seconds: WARM_UP_SECONDS, connections: CONNECTIONS, body: BODY });
  const [watched, api, services] = [side.pids(), side.apiPids?.() ?? [], serviceProcesses()];
  const before = [cpuSnapshot(watched), cpuSnapshot(api), cpuSnapshot(services)] as const;
  await counter?.reset();
  const figures = await load.post(side.url, { seconds: SECONDS, connections: CONNECTIONS, body: BODY });
  const [cpuMs, apiMs, servicesMs] = [cpuMsBetween(before[0], cpuSnapshot(watched)), cpuMsBetween(before[1], cpuSnapshot(api)), cpuMsBetween(before[2], cpuSnapshot(services))];
  const runs = figures.perSecond * SECONDS;
  const statements = counter ? await counter.perRun(runs) : null;
  const perRun = (ms: number) => (ms * 1000) / Math.max(1, runs);
  return { figures, cpuUsPerRun: perRun(cpuMs), apiUsPerRun: perRun(apiMs), servicesUsPerRun: perRun(servicesMs), statements };
}

/** The middle item by `key` (the upper one of an even count). */
function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)]!;
}

/**
 * The embedded server and a set-up's processes (and the same set-up with
 * `toggle`=1, when given), measured in turns for `rounds` rounds: a row per
 * side, its median round, the clusters' with the median of their rounds'
 * ratios to the embedded server's.
 */
async function inTurns(load: LoadGenerator, queue: "redis" | "postgres", workers: number, embedded: Side, rounds: number, toggle: string | undefined, counter: StatementCounter | null): Promise<BenchRow[]> {
  const clusters = [await startCluster(queue, workers), ...(toggle !== undefined ? [await startCluster(queue, workers, { [toggle]: "1" })] : [])];
  try {
    // The clusters' processes are this process's children too: the embedded server's CPU leaves them out.
    const theirs = () => new Set(clusters.flatMap((cluster) => cluster.pids()));
    const sides: Side[] = [{ ...embedded, pids: () => embedded.pids().filter((pid) => !theirs().has(pid)) }];
    for (const [index, cluster] of clusters.entries()) {
      sides.push(await sideOn(cluster, `${setupName(queue, workers)}${toggle === undefined ? "" : index === 0 ? `, ${toggle} unset` : `, ${toggle}=1`}`));
    }
    const results: Array<Array<Awaited<ReturnType<typeof measure>>>> = sides.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const [index, side] of sides.entries()) results[index]!.push(await measure(load, side, counter));
    }
    const reference = results[0]!.map((one) => one.figures.perSecond);
    return sides.map((side, index) => {
      const measured = results[index]!;
      const median = medianBy(measured, (one) => one.figures.perSecond);
      const errors = measured.reduce((sum, one) => sum + one.figures.errors + one.figures.non2xx, 0);
      const ratios = measured.map((one, round) => one.figures.perSecond / reference[round]!);
      const inOrder = measured.map((one, round) => `${Math.round(one.figures.perSecond)}${index === 0 ? "" : ` ${ratios[round]!.toFixed(2)}×`}`).join(", ");
      const share = index === 0 ? "reference" : `${medianBy(ratios, (ratio) => ratio).toFixed(2)}× embedded (the median of the rounds' ratios)`;
      return {
        benchmark: side.label,
        ...median.figures,
        note: `${share}; median of ${measured.length} rounds taken in turns; CPU ${Math.round(median.cpuUsPerRun)} µs/run${index === 0 ? "" : ` (the api ${Math.round(median.apiUsPerRun)})`}; rounds in order ${inOrder}; errors and non-2xx in all rounds ${errors}${statementsNote(median)}`,
      };
    });
  } finally {
    await Promise.allSettled(clusters.map((cluster) => cluster.stop()));
  }
}

/**
 * The bench's database vacuumed, as autovacuum would keep it: this machine
 * kind's PostgreSQL runs with autovacuum off, and rounds taken in turns keep
 * a server's tables through all of them, so its deleted rows (deliveries,
 * trimmed events and runs, BullMQ's finished jobs on PostgreSQL alone) piled
 * up and each of its rounds ran slower than the one before.
 */
async function vacuumAsAutovacuumWould(): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query("VACUUM");
  } finally {
    await client.end();
  }
}
