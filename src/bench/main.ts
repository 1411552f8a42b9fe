import { benchApi, benchCliStart } from "./api-bench.js";
import { benchManyComponents } from "./many-bench.js";
import { benchPackageDeploys } from "./package-bench.js";
import { benchDeployToFirstEvent, benchHttpSource, benchWarmInvocation } from "./source-bench.js";
import { printTable, type BenchRow } from "./table.js";
import { benchWorkflows } from "./workflow-bench.js";

/**
 * `npm run bench`: one table of the figures the issues ask for. Run it on an
 * otherwise idle machine; RUNNEL_BENCH_SECONDS sets the length of each load run.
 */
const only = process.argv[2];
const suites: Record<string, () => Promise<BenchRow[]>> = {
  api: async () => [...(await benchApi("sqlite")), ...(await benchApi("postgres")), await benchCliStart()],
  sources: async () => [...(await benchHttpSource()), await benchWarmInvocation(), await benchDeployToFirstEvent()],
  packages: benchPackageDeploys,
  workflows: benchWorkflows,
  many: benchManyComponents,
};

const rows: BenchRow[] = [];
for (const [name, suite] of Object.entries(suites)) {
  if (!only || only === name) rows.push(...(await suite()));
}
printTable(rows);
