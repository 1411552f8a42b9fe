import type { LoadFigures } from "../autocannon.js";
import { startBenchServer } from "../bench-server.js";
import type { BenchRow } from "../table.js";
import { BODY, CONNECTIONS, deployWorkflow, SECONDS } from "../workflow-bench.js";
import { processTree, withCpuPerRequest } from "../process-cpu.js";
import { freePort } from "./child-server.js";
import { startFastify } from "./fastify-server.js";
import { chooseLoadGenerator } from "./load.js";
import { installNodeRed, NODE_RED_VERSION, nodeRedDir, startNodeRed } from "./node-red.js";

/** The targets take turns this many times: a shared VM's speed drifts over a run by more than the differences measured. */
const ROUNDS = 3;
/**
 * Load before each measured run, not counted: sustained throughput, not the
 * JIT's warm-up. With 1 s, V8's compiler threads still took about a quarter
 * of Runnel's server CPU in the measured run (perf, session 10: 25 % of the
 * process's samples in its first 10 s of load, 13 % after); every target
 * gets the same warm-up.
 */
const WARM_UP_SECONDS = 5;

const TARGETS = ["fastify", "nodeRed", "runnel"] as const;
type Target = (typeof TARGETS)[number];

/** The round with the median rate (its latencies with it, as measured together). */
function median(rounds: Round[]): Round {
  return [...rounds].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(rounds.length / 2)]!;
}

const flags = (figures: LoadFigures) => `errors ${figures.errors}, non-2xx ${figures.non2xx}`;

/** A measured run's figures, with the CPU its server's processes spent per request answered. */
interface Round extends LoadFigures {
  /** CPU µs per request by group of processes (Runnel: its server, its runners). */
  cpuUsPerRequest: Record<string, number>;
}

/** The CPU per request of the median round, as a note: `server 300 µs + runners 100 µs`. */
const cpuNote = (round: Round) =>
  Object.entries(round.cpuUsPerRequest)
    .map(([group, us]) => `${group} ${Math.round(us)} µs`)
    .join(" + ");
const cpuTotal = (round: Round) => Object.values(round.cpuUsPerRequest).reduce((sum, us) => sum + us, 0);

/**
 * Runnel's 3-step HTTP workflow beside its peers, in one run with one load
 * generator and the same settings: a bare Fastify route (the ceiling for a
 * Node HTTP server here) and Node-RED running a flow of the same shape.
 * Fastify and Node-RED each run in a child process of their own; Runnel's
 * server runs in this process (as in the other suites), its steps in its own
 * runner processes. The load generator is a process of its own too.
 */
export async function benchPeers(): Promise<BenchRow[]> {
  const load = chooseLoadGenerator();
  const redJs = await installNodeRed();
  const stops: Array<() => Promise<void>> = [];
  try {
    const fastify = await startFastify(await freePort(), BODY);
    stops.push(fastify.stop);
    const nodeRed = await startNodeRed(redJs, await freePort(), BODY);
    stops.push(nodeRed.stop);
    const bench = await startBenchServer("sqlite");
    stops.push(bench.close);
    const urls: Record<Target, string> = { fastify: fastify.url, nodeRed: nodeRed.url, runnel: await deployWorkflow(bench, "three steps", 3) };

    // Whose CPU counts for each target, listed after the warm-up (Runnel's runners exist by then).
    const processGroups: Record<Target, () => Record<string, number[]>> = {
      fastify: () => ({ process: processTree(fastify.pid) }),
      nodeRed: () => ({ process: processTree(nodeRed.pid) }),
      runnel: () => ({ server: [process.pid], runners: processTree(process.pid, [fastify.pid, nodeRed.pid]).filter((pid) => pid !== process.pid) }),
    };
    const rounds: Record<Target, Round[]> = { fastify: [], nodeRed: [], runnel: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of TARGETS) {
        await load.post(urls[target], { seconds: WARM_UP_SECONDS, connections: CONNECTIONS, body: BODY });
        rounds[target].push(await withCpuPerRequest(processGroups[target](), SECONDS, () => load.post(urls[target], { seconds: SECONDS, connections: CONNECTIONS, body: BODY })));
      }
    }

    const [fastifyMedian, nodeRedMedian, runnelMedian] = TARGETS.map((target) => median(rounds[target])) as [Round, Round, Round];
    const times = (ratio: number) => `${ratio.toFixed(2)}×`;
    const perRound = rounds.runnel.map((runnel, i) => times(runnel.perSecond / rounds.nodeRed[i]!.perSecond)).join(", ");
    const settings = `${load.name}, ${CONNECTIONS} connections, ${SECONDS} s after ${WARM_UP_SECONDS} s warm-up, median of ${ROUNDS} rounds`;
    return [
      { benchmark: `bare Fastify POST route, parses JSON, answers {ok:true}`, ...fastifyMedian, note: `reference; own process; ${settings}; CPU ${cpuNote(fastifyMedian)}/req; ${flags(fastifyMedian)}` },
      {
        benchmark: `Node-RED ${NODE_RED_VERSION}: http in, 3 function nodes, http response`,
        ...nodeRedMedian,
        note: `own process, installed in ${nodeRedDir()}; CPU ${cpuNote(nodeRedMedian)}/req; ${flags(nodeRedMedian)}`,
      },
      {
        benchmark: "Runnel: workflow, 3 code steps, last responds",
        ...runnelMedian,
        note: `${times(runnelMedian.perSecond / nodeRedMedian.perSecond)} Node-RED (rounds ${perRound}), ${((runnelMedian.perSecond / fastifyMedian.perSecond) * 100).toFixed(0)}% of bare Fastify; CPU ${cpuNote(runnelMedian)}/req (${times(cpuTotal(nodeRedMedian) / cpuTotal(runnelMedian))} Node-RED's CPU efficiency); ${flags(runnelMedian)}`,
      },
    ];
  } finally {
    // Every server is stopped, even if another fails to stop.
    await Promise.allSettled(stops.map((stop) => stop()));
  }
}
