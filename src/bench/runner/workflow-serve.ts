/**
 * A child process for the runner's A/B bench (ab-bench.ts): starts the bench
 * server of the build in `<dist>` (argv[2]; this build when absent), deploys
 * the 3-step workflow, prints {"url", "pid"} as one line, and closes the
 * server on SIGTERM. Loaded from a build's dist/ by path, so that two builds
 * (main's and a branch's) run side by side under the same load.
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { startBenchServer as StartBenchServer } from "../bench-server.js";
import type { deployWorkflow as DeployWorkflow } from "../workflow-bench.js";

const dist = resolve(process.argv[2] ?? join(import.meta.dirname, "..", ".."));
const load = <T>(path: string): Promise<T> => import(pathToFileURL(join(dist, path)).href) as Promise<T>;
const { startBenchServer } = await load<{ startBenchServer: typeof StartBenchServer }>("bench/bench-server.js");
const { deployWorkflow } = await load<{ deployWorkflow: typeof DeployWorkflow }>("bench/workflow-bench.js");

const bench = await startBenchServer("sqlite");
const url = await deployWorkflow(bench, "three steps", 3);
process.stdout.write(`${JSON.stringify({ url, pid: process.pid })}\n`);
process.once("SIGTERM", () => {
  void bench.close().finally(() => process.exit(0));
});
