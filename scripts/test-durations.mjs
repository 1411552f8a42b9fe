#!/usr/bin/env node
// Writes test/setup/durations.json from the durations of the last full `npm test` on this checkout (Vitest's own
// cache, node_modules/.vite/vitest/*/results.json): the files' order in a fresh clone, which has no cache
// (test/setup/sequencer.ts). Run it after a full run on a quiet machine when files were added or grew.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const cacheRoot = "node_modules/.vite/vitest";
const caches = readdirSync(cacheRoot).map((dir) => join(cacheRoot, dir, "results.json"));
const results = caches.flatMap((file) => JSON.parse(readFileSync(file, "utf8")).results);
const seconds = {};
for (const [key, { duration }] of results) {
  const file = key.replace(/^:/, "");
  // Files under a second are left out (their order does not matter), and files since removed.
  if (duration >= 1_000 && existsSync(file)) seconds[file] = Math.round(duration / 100) / 10;
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([, a], [, b]) => b - a));
writeFileSync("test/setup/durations.json", `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/setup/durations.json: ${Object.keys(sorted).length} files of a second or more.`);
