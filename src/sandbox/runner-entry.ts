/**
 * The file a runner process starts from. Built (dist/): runner-bundle/runner.cjs
 * beside this module, bundled at build time. From source (vitest runs .ts): the
 * runner bundled by esbuild into a folder of its own under the sandbox's
 * workDir, once per sandbox. Either way the result lists what the runner
 * must be allowed to read.
 */
import { existsSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface RunnerEntry {
  file: string;
  /** Folders and files the runner reads: its own folder, and for an ES module the package.json that says so. */
  readPaths: string[];
  /** Removes what was built for this sandbox. */
  dispose(): Promise<void>;
}

export async function prepareRunnerEntry(workDir: string, moduleUrl: string = import.meta.url): Promise<RunnerEntry> {
  const here = dirname(fileURLToPath(moduleUrl));
  // Built: the runner bundled into one CommonJS file by scripts/build-runner.mjs (it imports pure rules from domain/).
  const compiled = join(here, "runner-bundle", "runner.cjs");
  if (existsSync(compiled)) {
    const folder = realpathSync(dirname(compiled));
    return { file: join(folder, "runner.cjs"), readPaths: [folder], dispose: async () => {} };
  }
  const source = join(here, "runner", "main.ts");
  if (!existsSync(source)) throw new Error(`The sandbox runner was not found beside ${here} (neither runner/main.js nor runner/main.ts).`);
  await mkdir(workDir, { recursive: true });
  const folder = realpathSync(await mkdtemp(join(workDir, "runner-")));
  const file = join(folder, "runner.cjs");
  // Only the source checkout needs esbuild: loaded here, not at the top.
  const { build } = await import("esbuild");
  await build({ entryPoints: [source], outfile: file, bundle: true, platform: "node", format: "cjs", target: "node20", logLevel: "silent" });
  return { file, readPaths: [folder], dispose: () => rm(folder, { recursive: true, force: true }) };
}
