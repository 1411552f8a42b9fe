/**
 * The node command line of a runner: heap limit, the permission model with
 * reads limited to the given paths (and no child processes, workers or
 * addons, which the model denies unless allowed), and no warning noise.
 */

export interface NodeFlagSupport {
  /** `--permission` (Node 22.13+/23.5+), `--experimental-permission` (Node 20–22), or null when neither exists. */
  permission: "--permission" | "--experimental-permission" | null;
  /** Silences only the ExperimentalWarning where Node can, else every warning. */
  quiet: string[];
}

/** What this node binary supports; the runner runs on the same binary as the host. */
export function detectNodeFlags(allowed: ReadonlySet<string> = process.allowedNodeEnvironmentFlags): NodeFlagSupport {
  const permission = allowed.has("--permission") ? "--permission" : allowed.has("--experimental-permission") ? "--experimental-permission" : null;
  const quiet = allowed.has("--disable-warning") ? ["--disable-warning=ExperimentalWarning"] : ["--no-warnings"];
  return { permission, quiet };
}

export interface RunnerNodeArgs {
  support: NodeFlagSupport;
  memoryMb: number;
  /** Files and folders the runner may read: its own entry and the bundle's folder. */
  readPaths: string[];
  entry: string;
  /** Arguments for the runner itself, after its entry file. */
  runnerArgs?: string[];
  /** The profiling mode's flags (cpu-profile.ts): the permission model is left off, since it turns off the inspector they need. */
  cpuProfileArgs?: string[];
}

export function runnerNodeArgs(options: RunnerNodeArgs): string[] {
  const args = [`--max-old-space-size=${options.memoryMb}`, ...options.support.quiet, "--no-addons"];
  if (options.cpuProfileArgs) args.push(...options.cpuProfileArgs);
  else if (options.support.permission) {
    args.push(options.support.permission, ...options.readPaths.map((path) => `--allow-fs-read=${path}`));
  }
  args.push(options.entry, ...(options.runnerArgs ?? []));
  return args;
}
