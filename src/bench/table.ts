/** One line of the benchmark table. */
export interface BenchRow {
  benchmark: string;
  perSecond?: number | undefined;
  p50Ms?: number | undefined;
  p99Ms?: number | undefined;
  note?: string | undefined;
}

/** Prints the rows as a Markdown table, so a note can quote it as it is. */
export function printTable(rows: BenchRow[]): void {
  const head = ["benchmark", "req/s", "p50 ms", "p99 ms", "note"];
  const fmt = (value: number | undefined, digits: number) => (value === undefined ? "" : value.toFixed(digits));
  const body = rows.map((row) => [row.benchmark, fmt(row.perSecond, 0), fmt(row.p50Ms, 3), fmt(row.p99Ms, 3), row.note ?? ""]);
  const widths = head.map((title, i) => Math.max(title.length, ...body.map((cells) => cells[i]!.length)));
  const numeric = (i: number) => i >= 1 && i <= 3;
  const line = (cells: string[]) => `| ${cells.map((cell, i) => (numeric(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(" | ")} |`;
  console.log(line(head));
  console.log(`|${widths.map((w, i) => (numeric(i) ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`);
  for (const cells of body) console.log(line(cells));
}

/** The p-quantile of sorted numbers. */
export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}
