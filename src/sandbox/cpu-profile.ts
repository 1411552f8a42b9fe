/**
 * The sandbox's profiling mode, for developers: RUNNEL_RUNNER_CPU_PROF=<absolute
 * folder> makes each runner write a V8 CPU profile (.cpuprofile, readable by
 * Chrome DevTools or `npx speedscope`) into that folder when it exits.
 *
 * Why a mode of its own: node's `--cpu-prof` runs on the inspector, and Node
 * 20's permission model turns the inspector off altogether (no flag allows
 * it back; `inspector.Session#connect` throws ERR_ACCESS_DENIED, and
 * `--cpu-prof` silently writes nothing, even with --allow-fs-write). So in
 * this mode, and only in it, runners start without the permission model; the
 * folder is bound writable into bubblewrap's otherwise read-only view. The
 * other boundaries (bubblewrap's namespaces, cgroups, the empty environment,
 * the egress proxy) stay. The profile is written when node exits on its own,
 * so the host lets an idle, evicted or closing runner exit by closing its
 * channel (runner-process.ts) instead of killing it.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

export const CPU_PROFILE_VARIABLE = "RUNNEL_RUNNER_CPU_PROF";

export interface CpuProfiling {
  /** The folder each runner writes its profile into. */
  dir: string;
}

/** The profiling mode for a folder (loadConfig checked it is absolute: RUNNEL_RUNNER_CPU_PROF), made when missing. */
export function openProfileFolder(profiling: CpuProfiling): CpuProfiling {
  if (!isAbsolute(profiling.dir)) throw new Error(`${CPU_PROFILE_VARIABLE}: expected an absolute folder path for the runners' CPU profiles, got "${profiling.dir}".`);
  mkdirSync(profiling.dir, { recursive: true });
  return { dir: resolve(profiling.dir) };
}

/**
 * The node flags that write one runner's profile. Its name is made here: under
 * bubblewrap every runner is pid 1 of its own namespace, so node's default
 * name (date, time, pid) would collide between runners that exit in the same
 * second.
 */
export function cpuProfileArgs(profiling: CpuProfiling): string[] {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  return ["--cpu-prof", `--cpu-prof-dir=${profiling.dir}`, `--cpu-prof-name=runner-${stamp}-${randomBytes(4).toString("hex")}.cpuprofile`];
}
