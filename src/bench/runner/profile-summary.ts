/**
 * Reads V8 CPU profiles (.cpuprofile, as the sandbox's profiling mode writes
 * them) and prints where the time went: each function's self time as a share
 * of the samples, the largest first, with idle ("(idle)", the event loop
 * waiting) shown apart. Several files are added together (one per runner).
 *
 *   node dist/bench/runner/profile-summary.js <file.cpuprofile>… [--top N]
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args[topAt + 1]) : 40;
const files = args.filter((arg, index) => arg !== "--top" && index !== topAt + 1);
if (files.length === 0) {
  console.error("usage: node dist/bench/runner/profile-summary.js <file.cpuprofile>… [--top N]");
  process.exit(2);
}

/** Microseconds of self time by function (name, file, line). */
const selfUs = new Map<string, number>();
let totalUs = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const label = new Map<number, string>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    label.set(node.id, url ? `${functionName || "(anonymous)"} ${basename(url)}:${lineNumber + 1}` : functionName);
  }
  // A sample's time is the delta to the next one: V8 records each sample's distance from the one before.
  for (let index = 0; index < profile.samples.length; index++) {
    const us = profile.timeDeltas[index + 1] ?? 0;
    const name = label.get(profile.samples[index]!) ?? "?";
    selfUs.set(name, (selfUs.get(name) ?? 0) + us);
    totalUs += us;
  }
}
const idle = selfUs.get("(idle)") ?? 0;
const busy = totalUs - idle;
console.log(`${files.length} profile(s): ${(totalUs / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (${((busy / totalUs) * 100).toFixed(1)} %)`);
console.log("| share of busy | self ms | function |");
console.log("|---:|---:|---|");
for (const [name, us] of [...selfUs].filter(([name]) => name !== "(idle)").sort((x, y) => y[1] - x[1]).slice(0, top)) {
  console.log(`| ${((us / busy) * 100).toFixed(1)} % | ${(us / 1000).toFixed(0)} | ${name} |`);
}
