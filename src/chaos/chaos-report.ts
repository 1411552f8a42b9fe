/** A chaos run's figures as the Markdown table that `npm run chaos` prints and docs/reliability.md keeps. */
import { cpus } from "node:os";
import type { ChaosReport } from "./chaos-run.js";

function rows(report: ChaosReport): string[][] {
  const { source, workflow, answering } = report;
  const runsRow = (name: string, target: ChaosReport["workflow"]) => [name, String(target.acknowledged), String(target.stored), String(target.runsCompleted), String(target.doubled), String(target.lost), String(target.storedUnacknowledged)];
  return [
    ["HTTP source (events)", String(source.acknowledged), String(source.stored), "", String(source.doubled), String(source.lost), String(source.storedUnacknowledged)],
    runsRow("workflow (runs)", workflow),
    runsRow("workflow answering its callers (runs)", answering),
  ];
}

export function reportMarkdown(report: ChaosReport): string {
  const head = ["target", "acknowledged", "stored", "runs completed", "doubled", "lost", "stored, not acknowledged"];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...rows(report).map((cells) => `| ${cells.join(" | ")} |`)];
  const when = new Date().toISOString().slice(0, 10);
  return [
    `Last run: ${when}, ${report.store === "sqlite" ? "SQLite (embedded)" : "PostgreSQL"}, ${report.kills} SIGKILLs over ${report.seconds} s, ${report.requests} requests (${report.unanswered} unanswered while the server was down), node ${process.version}, ${cpus().length} cores.`,
    "",
    ...lines,
  ].join("\n");
}

