/**
 * Limits on a runner as a whole, beyond the JavaScript heap that
 * `--max-old-space-size` bounds: memory (heap, Buffers and native memory
 * together), processes and threads, and CPU.
 *
 * Where the machine lets the server make cgroups (v2, or v1 as on many VMs),
 * each runner gets cgroups of its own under the server's, and joins them
 * before it execs: a tiny shell wrapper writes its pid into their
 * cgroup.procs, then execs the real command (bubblewrap or node), so no user
 * code ever runs outside them. Otherwise RLIMIT_AS bounds the address space
 * (`ulimit -v` in the same wrapper), which is coarser: node reserves about
 * 1 GB of address space for itself, and WebAssembly memories cannot be
 * reserved under it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import type { SpawnCommand } from "../runner-process.js";

export type LimiterKind = "cgroup-v2" | "cgroup-v1" | "rlimit";

/** A runner's share of the machine, set up before it starts and released after it is gone. */
export interface RunnerResources {
  /** The command, wrapped so that the process is under its limits before it execs. */
  wrap(command: SpawnCommand): SpawnCommand;
  /** The kernel killed the runner for passing its memory limit. */
  outOfMemory(): boolean;
  /** What the runner may use in all, in MB, as its errors name it. */
  readonly memoryLimitMb: number;
  /**
   * The limit is on its address space (RLIMIT_AS, no cgroups here): past it
   * an allocation fails wherever it happens, and native code that cannot
   * handle that aborts the process (SIGABRT) rather than report it.
   */
  readonly addressSpaceLimited?: boolean;
  /** Removes what was made for the runner (after it is gone). */
  release(): void;
}

export interface ResourceLimiter {
  readonly kind: LimiterKind;
  /** Threads and processes a runner may have; null where not limited. */
  readonly pidsLimit: number | null;
  /** Whether a runner's CPU is capped. */
  readonly cpuLimited: boolean;
  forRunner(memoryMb: number): RunnerResources;
  /** Removes the sandbox's own cgroups. */
  close(): void;
}

/**
 * Memory a runner may use beyond its heap limit: node itself (about 40 MB
 * here), V8's young generation and code, and a modest share of Buffers.
 */
export const MEMORY_HEADROOM_MB = 128;
/** Node runs about 11 threads (libuv's pool, V8's workers); the rest is room, not a licence. */
export const PIDS_PER_RUNNER = 64;
/** One core per runner, in cgroup CPU bandwidth terms (quota over period, µs). */
const CPU_PERIOD_US = 100_000;
const CPU_QUOTA_US = 100_000;
/** Address space node reserves for itself (code range, cages) beyond what it uses. */
const ADDRESS_SPACE_BASE_MB = 1024;

const CGROUP_ROOT = "/sys/fs/cgroup";
/** A runner that cannot join its cgroups exits at once with this code, before anything runs. */
export const JOIN_FAILED_EXIT = 97;
/** The largest file a runner may write (RLIMIT_FSIZE): its journal's entries are far smaller (JOURNAL_MAX_BYTES); CPU profiles fit. */
export const RUNNER_FILE_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

let sequence = 0;

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

function removeTree(dir: string): void {
  // Children first; a cgroup directory is removed with rmdir, never with rm -r (its files are not files).
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeTree(join(dir, entry.name));
    killMembers(dir);
    rmdirSync(dir);
  } catch {
    // Still holds a process (it is being killed), or already gone: the next start removes what is left.
  }
}

/**
 * SIGKILLs whatever is still in a runner's cgroup when it is let go: only a
 * runner's processes are ever put there, and none may outlive it (a wrapper
 * left waiting was seen once its server had gone). cgroup v1 has no
 * cgroup.kill; v2's is written first, where the kernel has it.
 */
function killMembers(dir: string): void {
  for (const line of readOr(join(dir, "cgroup.procs")).split("\n")) {
    const pid = Number(line);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * The shell wrapper: join each cgroup in turn (fail before exec if one cannot be joined), apply ulimit, exec.
 * The size of any file the runner writes is bounded too (`ulimit -f`, RLIMIT_FSIZE): its only writable file is
 * the journal the host gives it (runner/journal.ts), which its code can reach as well; past the bound a
 * write fails with EFBIG (Node ignores the kernel's SIGXFSZ).
 */
function wrapCommand(command: SpawnCommand, procsFiles: string[], addressSpaceKb: number | null): SpawnCommand {
  const script = [
    'n="$1"; shift',
    `while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit ${JOIN_FAILED_EXIT}; shift; n=$((n - 1)); done`,
    ...(addressSpaceKb === null ? [] : [`ulimit -v ${addressSpaceKb} || exit ${JOIN_FAILED_EXIT}`]),
    // In blocks of 512 bytes (POSIX; dash), or of 1,024 (bash): a bound either way.
    `ulimit -f ${RUNNER_FILE_SIZE_LIMIT_BYTES / 512} || exit ${JOIN_FAILED_EXIT}`,
    'exec "$@"',
  ].join("\n");
  return { ...command, command: "/bin/sh", args: ["-c", script, "runnel-runner", String(procsFiles.length), ...procsFiles, command.command, ...command.args], fileSizeLimited: true };
}

interface V1Paths {
  memory: string | null;
  pids: string | null;
  cpu: string | null;
}

/** The server's own cgroup in each v1 hierarchy, from /proc/self/cgroup. */
function ownV1Cgroups(): V1Paths {
  const paths: V1Paths = { memory: null, pids: null, cpu: null };
  let text = "";
  try {
    text = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return paths;
  }
  for (const line of text.split("\n")) {
    const [, controllers, path] = line.split(":");
    if (!controllers || path === undefined) continue;
    for (const controller of controllers.split(",")) {
      if (controller !== "memory" && controller !== "pids" && controller !== "cpu") continue;
      const mount = [join(CGROUP_ROOT, controller), join(CGROUP_ROOT, controllers)].find((dir) => existsSync(join(dir, "cgroup.procs")));
      if (mount) paths[controller] = join(mount, path);
    }
  }
  return paths;
}

/** The server's own cgroup in the v2 hierarchy, when the memory controller can be given to children there. */
function ownV2Cgroup(): string | null {
  try {
    const line = readFileSync("/proc/self/cgroup", "utf8").split("\n").find((entry) => entry.startsWith("0::"));
    if (!line) return null;
    const mount = [CGROUP_ROOT, join(CGROUP_ROOT, "unified")].find((dir) => existsSync(join(dir, "cgroup.controllers")));
    if (!mount) return null;
    const own = join(mount, line.slice(3));
    const controllers = readFileSync(join(own, "cgroup.controllers"), "utf8");
    return controllers.split(/\s+/).includes("memory") ? own : null;
  } catch {
    return null;
  }
}

class CgroupV1Limiter implements ResourceLimiter {
  readonly kind = "cgroup-v1" as const;
  readonly pidsLimit: number | null;
  readonly cpuLimited: boolean;
  private readonly roots: Array<{ controller: keyof V1Paths; dir: string }>;

  constructor(roots: Array<{ controller: keyof V1Paths; dir: string }>) {
    this.roots = roots;
    this.pidsLimit = roots.some((root) => root.controller === "pids") ? PIDS_PER_RUNNER : null;
    this.cpuLimited = roots.some((root) => root.controller === "cpu");
  }

  forRunner(memoryMb: number): RunnerResources {
    const name = `runner-${++sequence}`;
    const limitMb = memoryMb + MEMORY_HEADROOM_MB;
    const bytes = String(limitMb * 1024 * 1024);
    const dirs: Array<{ controller: keyof V1Paths; dir: string }> = [];
    for (const root of this.roots) {
      const dir = join(root.dir, name);
      mkdirSync(dir);
      dirs.push({ controller: root.controller, dir });
      if (root.controller === "memory") {
        writeFileSync(join(dir, "memory.limit_in_bytes"), bytes);
        // With swap accounting, swap counts too: a runner cannot page its way past the limit.
        if (existsSync(join(dir, "memory.memsw.limit_in_bytes"))) tryWrite(join(dir, "memory.memsw.limit_in_bytes"), bytes);
      } else if (root.controller === "pids") {
        writeFileSync(join(dir, "pids.max"), String(PIDS_PER_RUNNER));
      } else {
        tryWrite(join(dir, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
        tryWrite(join(dir, "cpu.cfs_quota_us"), String(CPU_QUOTA_US));
      }
    }
    const memoryDir = dirs.find((entry) => entry.controller === "memory")?.dir;
    return {
      memoryLimitMb: limitMb,
      wrap: (command) => wrapCommand(command, dirs.map((entry) => join(entry.dir, "cgroup.procs")), null),
      outOfMemory: () => (memoryDir ? /^oom_kill\s+[1-9]/m.test(readOr(join(memoryDir, "memory.oom_control"))) : false),
      release: () => dirs.forEach((entry) => removeTree(entry.dir)),
    };
  }

  close(): void {
    for (const root of this.roots) removeTree(root.dir);
  }
}

class CgroupV2Limiter implements ResourceLimiter {
  readonly kind = "cgroup-v2" as const;
  readonly pidsLimit: number | null;
  readonly cpuLimited: boolean;

  constructor(
    private readonly root: string,
    controllers: string[],
  ) {
    this.pidsLimit = controllers.includes("pids") ? PIDS_PER_RUNNER : null;
    this.cpuLimited = controllers.includes("cpu");
  }

  forRunner(memoryMb: number): RunnerResources {
    const dir = join(this.root, `runner-${++sequence}`);
    const limitMb = memoryMb + MEMORY_HEADROOM_MB;
    mkdirSync(dir);
    writeFileSync(join(dir, "memory.max"), String(limitMb * 1024 * 1024));
    tryWrite(join(dir, "memory.swap.max"), "0");
    if (this.pidsLimit !== null) writeFileSync(join(dir, "pids.max"), String(PIDS_PER_RUNNER));
    if (this.cpuLimited) tryWrite(join(dir, "cpu.max"), `${CPU_QUOTA_US} ${CPU_PERIOD_US}`);
    return {
      memoryLimitMb: limitMb,
      wrap: (command) => wrapCommand(command, [join(dir, "cgroup.procs")], null),
      outOfMemory: () => /^oom_kill\s+[1-9]/m.test(readOr(join(dir, "memory.events"))),
      release: () => {
        // cgroup.kill (5.14+) takes whatever the runner left behind; then the directory can go.
        tryWrite(join(dir, "cgroup.kill"), "1");
        removeTree(dir);
      },
    };
  }

  close(): void {
    removeTree(this.root);
  }
}

class AddressSpaceLimiter implements ResourceLimiter {
  readonly kind = "rlimit" as const;
  readonly pidsLimit = null;
  readonly cpuLimited = false;

  forRunner(memoryMb: number): RunnerResources {
    const limitMb = memoryMb + MEMORY_HEADROOM_MB;
    return {
      memoryLimitMb: limitMb,
      addressSpaceLimited: true,
      wrap: (command) => wrapCommand(command, [], (limitMb + ADDRESS_SPACE_BASE_MB) * 1024),
      // Under RLIMIT_AS an allocation fails (an exception, or V8's fatal error), which stderr tells.
      outOfMemory: () => false,
      release: () => undefined,
    };
  }

  close(): void {}
}

function readOr(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** Cgroups a crashed server left (named for a pid that no longer runs), removed at the next start. */
function removeLeftovers(parent: string): void {
  let entries: string[];
  try {
    entries = readdirSync(parent).filter((name) => /^runnel-\d+-[0-9a-f]+$/.test(name));
  } catch {
    return;
  }
  for (const name of entries) {
    const pid = Number(name.split("-")[1]);
    if (pid === process.pid || isRunning(pid)) continue;
    removeTree(join(parent, name));
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The best limiter this machine allows: cgroup v2, else v1 (memory at
 * least), else RLIMIT_AS. `prefer: "rlimit"` skips cgroups (tests).
 */
export function createResourceLimiter(options: { logger?: Logger | undefined; prefer?: LimiterKind } = {}): ResourceLimiter {
  const name = `runnel-${process.pid}-${Math.floor(Math.random() * 0xffffff).toString(16)}`;
  if (options.prefer !== "rlimit" && options.prefer !== "cgroup-v1") {
    const v2 = ownV2Cgroup();
    if (v2) {
      const root = join(v2, name);
      try {
        removeLeftovers(v2);
        mkdirSync(root);
        const available = readOr(join(v2, "cgroup.controllers")).split(/\s+/);
        const wanted = ["memory", "pids", "cpu"].filter((controller) => available.includes(controller));
        // Children of `root` get the controllers `root` enables; `root` itself holds no process.
        writeFileSync(join(root, "cgroup.subtree_control"), wanted.map((controller) => `+${controller}`).join(" "));
        const enabled = readOr(join(root, "cgroup.subtree_control")).split(/\s+/).filter(Boolean);
        if (enabled.includes("memory")) return new CgroupV2Limiter(root, enabled);
        options.logger?.debug({ enabled }, "sandbox: cgroup v2 is mounted but the memory controller cannot be given to runners here");
      } catch (error) {
        options.logger?.debug({ err: error }, "sandbox: cgroup v2 cannot be used for runners here");
      }
      removeTree(root);
    }
  }
  if (options.prefer !== "rlimit") {
    const own = ownV1Cgroups();
    const roots: Array<{ controller: keyof V1Paths; dir: string }> = [];
    for (const controller of ["memory", "pids", "cpu"] as const) {
      const parent = own[controller];
      if (!parent) continue;
      try {
        removeLeftovers(parent);
        const dir = join(parent, name);
        mkdirSync(dir);
        roots.push({ controller, dir });
      } catch {
        // Not ours to write (not root, read-only): that controller is left out.
      }
    }
    if (roots.some((root) => root.controller === "memory")) return new CgroupV1Limiter(roots);
    for (const root of roots) removeTree(root.dir);
  }
  return new AddressSpaceLimiter();
}
