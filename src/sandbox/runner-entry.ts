/**
 * The file a runner process starts from. Built (dist/): the compiled
 * runner/main.js beside this module. From source (vitest runs .ts): the
 * runner bundled by esbuild into a folder of its own under the sandbox's
 * workDir, once per sandbox. Either way the result lists what the runner
 * must be allowed to read.
 */
import { existsSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { dirname, join, parse } from "node:path";
import { fileURLToPath } from "node:url";

export interface RunnerEntry {
  file: string;
  /** Folders and files the runner reads: its own folder, and for an ES module the package.json that says so. */
  readPaths: string[];
  /** Removes what was built for this sandbox. */
  dispose(): Promise<void>;
}

/** Node reads the nearest package.json to learn that a .js file is an ES module. */
function nearestPackageJson(dir: string): string | null {
  for (let current = dir; ; current = dirname(current)) {
    const candidate = join(current, "package.json");
    if (existsSync(candidate)) return candidate;
    if (current === parse(current).root) return null;
  }
}

export async function prepareRunnerEntry(workDir: string, moduleUrl: string = import.meta.url): Promise<RunnerEntry> {
  const here = dirname(fileURLToPath(moduleUrl));
  const compiled = join(here, "runner", "main.js");
  if (existsSync(compiled)) {
    const folder = realpathSync(dirname(compiled));
    const packageJson = nearestPackageJson(folder);
    return { file: join(folder, "main.js"), readPaths: packageJson ? [folder, packageJson] : [folder], dispose: async () => {} };
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
