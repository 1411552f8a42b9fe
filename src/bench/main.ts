import { benchApi, benchCliStart } from "./api-bench.js";
import { benchConsoleInspector } from "./console-bench.js";
import { benchRunControl } from "./control-bench.js";
import { benchManyComponents } from "./many-bench.js";
import { benchPackageDeploys } from "./package-bench.js";
import { benchDeployToFirstEvent, benchHttpSource, benchWarmInvocation } from "./source-bench.js";
import { benchPeers } from "./peers/peers-bench.js";
import { benchScale } from "./scale-bench.js";
import { printTable, type BenchRow } from "./table.js";
import { benchWorkflows } from "./workflow-bench.js";

/**
 * `npm run bench`: one table of the figures the issues ask for. Run it on an
 * otherwise idle machine; RUNNEL_BENCH_SECONDS sets the length of each load run.
 * `npm run bench -- <suite>` runs one suite (api, sources, packages, workflows, control, many, console); `npm run bench -- --peers` runs
 * only the comparison with Fastify and Node-RED, which is never part of the
 * full run (it installs Node-RED on first use, and takes its own minutes);
 * `--scale` runs api and worker processes on PostgreSQL with Redis, and on
 * PostgreSQL alone, beside the embedded server (it needs both running).
 */
const only = process.argv[2]?.replace(/^--/, "");
const suites: Record<string, () => Promise<BenchRow[]>> = {
  api: async () => [...(await benchApi("sqlite")), ...(await benchApi("postgres")), await benchCliStart()],
  sources: async () => [...(await benchHttpSource()), await benchWarmInvocation(), await benchDeployToFirstEvent()],
  packages: benchPackageDeploys,
  workflows: benchWorkflows,
  control: benchRunControl,
  many: benchManyComponents,
  console: benchConsoleInspector,
};
/** Suites run only when named. */
const onRequest: Record<string, () => Promise<BenchRow[]>> = { peers: benchPeers, scale: benchScale };

const all = { ...suites, ...onRequest };
if (only && !Object.hasOwn(all, only)) {
  console.error(`There is no bench suite "${process.argv[2]}"; the suites are ${[...Object.keys(suites), "--peers", "--scale"].join(", ")}.`);
  process.exit(2);
}
const rows: BenchRow[] = [];
for (const suite of only ? [all[only]!] : Object.values(suites)) rows.push(...(await suite()));
printTable(rows);
