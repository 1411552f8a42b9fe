/**
 * `npm run chaos [-- --kills N] [--seconds S] [--postgres] [--no-docs]`:
 * SIGKILLs a loaded server N times (default 20) and prints what was
 * acknowledged, stored, run, doubled and lost. Exits 1 when anything
 * acknowledged was lost or doubled.
 */
import { runChaos } from "./chaos-run.js";
import { reportMarkdown } from "./chaos-report.js";
import { writeSection } from "./reliability-doc.js";

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function main(): Promise<void> {
  const kills = Number(argument("--kills") ?? 20);
  const seconds = Number(argument("--seconds") ?? Math.max(30, Math.ceil(kills * 2)));
  const store = process.argv.includes("--postgres") ? "postgres" : "sqlite";
  if (!Number.isInteger(kills) || kills < 0 || !Number.isFinite(seconds) || seconds <= 0) {
    console.error("Usage: npm run chaos -- [--kills N] [--seconds S] [--postgres] [--no-docs]");
    process.exit(2);
  }
  const report = await runChaos({ kills, seconds, store, log: (line) => console.error(`[chaos] ${line}`) });
  console.log(reportMarkdown(report));
  if (!process.argv.includes("--no-docs")) await writeSection("chaos", reportMarkdown(report));
  const broken = [report.source, report.workflow, report.answering].reduce((sum, target) => sum + target.lost + target.doubled, 0);
  if (broken > 0) {
    console.error(`[chaos] FAILED: ${broken} acknowledged events were lost or doubled.`);
    process.exit(1);
  }
}

await main();
