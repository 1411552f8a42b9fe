import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startBenchServer, type BenchServer } from "./bench-server.js";
import { startFixtureRegistry, type FixturePackage } from "./fixture-registry.js";
import { quantile, type BenchRow } from "./table.js";

const REPETITIONS = 7;

/** `count` modules of a few dozen lines each, so that bundling has something to read. */
function modules(count: number, esm: boolean): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const body = Array.from({ length: 30 }, (_, line) => `  total += (input * ${line + 1} + ${i}) % 7;`).join("\n");
    files[`lib/part${i}.js`] = esm
      ? `export function part${i}(input) {\n  let total = 0;\n${body}\n  return total;\n}\n`
      : `exports.part${i} = function (input) {\n  let total = 0;\n${body}\n  return total;\n};\n`;
  }
  const names = Array.from({ length: count }, (_, i) => `part${i}`);
  files["index.js"] = esm
    ? `${names.map((name) => `import { ${name} } from "./lib/${name}.js";`).join("\n")}\nexport const sum = (input) => ${names.map((name) => `${name}(input)`).join(" + ")};\n`
    : `const parts = [${names.map((name) => `require("./lib/${name}.js").${name}`).join(", ")}];\nexports.sum = (input) => parts.reduce((total, part) => total + part(input), 0);\n`;
  return files;
}

/** Three packages: CommonJS, an ES module package with an exports map, and one with a dependency. */
const PACKAGES: FixturePackage[] = [
  { name: "bench-alpha", version: "1.4.2", files: modules(40, false) },
  { name: "@bench/beta", version: "2.1.0", manifest: { type: "module", exports: { ".": "./index.js" } }, files: modules(40, true) },
  { name: "bench-gamma", version: "0.9.0", manifest: { dependencies: { "bench-alpha": "^1.0.0" } }, files: { ...modules(20, false), "extra.js": `module.exports = require("bench-alpha").sum;\n` } },
];

const component = (tag: string) => `import alpha from "bench-alpha@^1";
import { sum } from "@bench/beta";
import gamma from "bench-gamma";
export default {
  name: "Three packages", version: "1",
  props: { http: { type: "$.interface.http" } },
  async run(event) { this.$emit({ tag: ${JSON.stringify(tag)}, value: alpha.sum(1) + sum(2) + gamma.sum(3) }); },
};`;

const NO_PACKAGES = (tag: string) => `export default {
  name: "No packages", version: "1",
  props: { http: { type: "$.interface.http" } },
  async run(event) { this.$emit({ tag: ${JSON.stringify(tag)} }); },
};`;

/**
 * Deploy (POST /v1/sources) of a component with three packages: on an empty
 * package cache; on a warm cache with new code (a new server over the same
 * data folder), beside new code without packages for reference; the same
 * code again; and the same code again after a restart. The registry is in
 * process, so the figures are Runnel's own cost, not the network's.
 */
export async function benchPackageDeploys(): Promise<BenchRow[]> {
  const registry = await startFixtureRegistry(PACKAGES);
  const times = { cold: [] as number[], warm: [] as number[], warmRunning: [] as number[], reference: [] as number[], unchanged: [] as number[], restarted: [] as number[] };
  try {
    for (let i = 0; i < REPETITIONS; i++) {
      const dataDir = await mkdtemp(join(tmpdir(), "runnel-bench-packages-"));
      // Each server deploys something small first, so that esbuild's service is up: the rows measure deploys, not start-up.
      const start = async () => {
        const bench = await startBenchServer("sqlite", { env: { RUNNEL_NPM_REGISTRY: registry.url }, dataDir });
        await timedDeploy(bench, NO_PACKAGES(`warm-up ${Math.random()}`));
        return bench;
      };
      try {
        let bench = await start();
        times.cold.push(await timedDeploy(bench, component(`cold ${i}`)));
        await bench.close();
        bench = await start();
        times.reference.push(await timedDeploy(bench, NO_PACKAGES(`reference ${i}`)));
        times.warm.push(await timedDeploy(bench, component(`warm ${i}`)));
        times.unchanged.push(await timedDeploy(bench, component(`warm ${i}`)));
        // A server that has been deploying for a while (its code warm in V8), new code, cached packages.
        for (let round = 0; round < 3; round++) await timedDeploy(bench, component(`busy ${i} ${round}`));
        times.warmRunning.push(await timedDeploy(bench, component(`running ${i}`)));
        await bench.close();
        bench = await start();
        times.restarted.push(await timedDeploy(bench, component(`warm ${i}`)));
        await bench.close();
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    await registry.close();
  }
  const row = (benchmark: string, values: number[], note: string): BenchRow => {
    values.sort((a, b) => a - b);
    return { benchmark, p50Ms: quantile(values, 0.5), p99Ms: quantile(values, 0.99), note: `${REPETITIONS} runs; ${note}` };
  };
  return [
    row("deploy with 3 packages, cold package cache", times.cold, "resolve, download, unpack, bundle, load in a new runner"),
    row("deploy with 3 packages, warm cache, new code", times.warm, "new server; versions resolved again, nothing downloaded"),
    row("deploy with 3 packages, warm cache, new code, running server", times.warmRunning, "after a few deploys on the same server"),
    row("deploy without packages, new code (reference)", times.reference, "the same server; bundle and load in a new runner"),
    row("redeploy with 3 packages, unchanged code", times.unchanged, "lock and bundle reused, no registry; target warm redeploy < 50 ms"),
    row("redeploy with 3 packages, unchanged, restarted", times.restarted, "new server: lock reused, bundled again, no runner"),
  ];
}

async function timedDeploy(bench: BenchServer, code: string): Promise<number> {
  const begin = performance.now();
  const response = await fetch(`${bench.server.url}/v1/sources`, {
    method: "POST",
    headers: { authorization: `Bearer ${bench.key}`, "content-type": "application/json" },
    body: JSON.stringify({ component_code: code, filename: "three.mjs" }),
  });
  const body = await response.text();
  const elapsed = performance.now() - begin;
  if (response.status !== 200) throw new Error(`the deploy failed: ${response.status} ${body}`);
  return elapsed;
}
