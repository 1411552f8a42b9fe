/**
 * CPU time spent by a set of processes over a measured window, from
 * /proc/<pid>/stat (user + system, in clock ticks). On a shared VM the
 * throughput of a run drifts with whatever else the machine does; the CPU a
 * server spends per request moves much less, so the peers bench reports both.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Linux's USER_HZ: /proc reports CPU time in hundredths of a second on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/** CPU ticks by process id, for the processes chosen when it was taken. */
export type CpuSnapshot = Map<number, number>;

/** The CPU used so far by `pids` (those that still exist). */
export function cpuSnapshot(pids: Iterable<number>): CpuSnapshot {
  const snapshot: CpuSnapshot = new Map();
  for (const pid of pids) {
    const ticks = cpuTicksOf(pid);
    if (ticks !== undefined) snapshot.set(pid, ticks);
  }
  return snapshot;
}

/**
 * Milliseconds of CPU between two snapshots, counting only processes present
 * in both: a load generator started and ended between them is not counted,
 * nor is a process that came or went in the window (a steady-state
 * measurement has none).
 */
export function cpuMsBetween(before: CpuSnapshot, after: CpuSnapshot): number {
  let ticks = 0;
  for (const [pid, end] of after) {
    const start = before.get(pid);
    if (start !== undefined) ticks += end - start;
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** `root` and every process below it, except those below `exclude` (and they). */
export function processTree(root: number, exclude: readonly number[] = []): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const parent = statFields(pid)?.[1];
    if (parent === undefined) continue;
    const siblings = children.get(Number(parent)) ?? [];
    siblings.push(pid);
    children.set(Number(parent), siblings);
  }
  const excluded = new Set(exclude);
  const tree: number[] = [];
  const visit = (pid: number): void => {
    if (excluded.has(pid)) return;
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return tree;
}

/**
 * Runs `load` (a measured run of `seconds`) and answers its figures with the
 * CPU each group of processes spent per request answered, in µs: the same
 * accounting for every bench that reports it (peers, workflows).
 */
export async function withCpuPerRequest<T extends { perSecond: number }>(groups: Record<string, number[]>, seconds: number, load: () => Promise<T>): Promise<T & { cpuUsPerRequest: Record<string, number> }> {
  const entries = Object.entries(groups);
  const before = entries.map(([, pids]) => cpuSnapshot(pids));
  const figures = await load();
  const requests = Math.max(1, figures.perSecond * seconds);
  const cpuUsPerRequest = Object.fromEntries(entries.map(([group, pids], index) => [group, (cpuMsBetween(before[index]!, cpuSnapshot(pids)) * 1000) / requests]));
  return { ...figures, cpuUsPerRequest };
}

/** A thread's time on a CPU and waiting in the run queue for one, so far, in ns. */
export interface ThreadSchedule {
  runNs: number;
  waitNs: number;
}

/**
 * The scheduler's account of one thread (/proc/<pid>/task/<tid>/schedstat):
 * undefined where the kernel keeps none (built without schedstats), or the
 * thread is gone.
 */
export function threadSchedule(pid: number, tid = pid): ThreadSchedule | undefined {
  try {
    const [runNs, waitNs] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").trim().split(" ").map(Number);
    return runNs === undefined || waitNs === undefined || !Number.isFinite(runNs + waitNs) ? undefined : { runNs, waitNs };
  } catch {
    return undefined;
  }
}

/**
 * How many times one thread has gone to sleep and been woken so far (its
 * voluntary context switches, /proc/<pid>/task/<tid>/status): undefined
 * where the thread is gone. Each wake-up of a thread that waits on its
 * sockets costs CPU of its own, which a run that crosses processes pays and
 * a flow in one thread does not (docs/performance.md, session 31).
 */
export function threadWakeUps(pid: number, tid = pid): number | undefined {
  try {
    const match = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8"));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Shares of a measured window: on a CPU, and runnable but waiting for one; and the times the thread slept and was woken. */
export interface MainThreadShare {
  ran: number;
  waited: number;
  wokeUp?: number;
}

/**
 * Runs `load` and answers its figures with the share of the window that the
 * main thread of `pid` spent running, and waiting for a CPU (runnable, while
 * other processes had both cores): a latency tail that comes with a high
 * `waited` is the machine's contention (the load generator shares it), not
 * the server's own work. Left out where the kernel keeps no such account.
 * With it, the times the thread slept and was woken in the window.
 */
export async function withThreadSchedule<T extends object>(pid: number, load: () => Promise<T>): Promise<T & { mainThread?: MainThreadShare }> {
  const before = threadSchedule(pid);
  const wakeUpsBefore = threadWakeUps(pid);
  const started = process.hrtime.bigint();
  const figures = await load();
  const wallNs = Number(process.hrtime.bigint() - started);
  const after = threadSchedule(pid);
  const wakeUpsAfter = threadWakeUps(pid);
  if (!before || !after || wallNs <= 0) return figures;
  const share: MainThreadShare = { ran: (after.runNs - before.runNs) / wallNs, waited: (after.waitNs - before.waitNs) / wallNs };
  if (wakeUpsBefore !== undefined && wakeUpsAfter !== undefined) share.wokeUp = wakeUpsAfter - wakeUpsBefore;
  return Object.assign(figures, { mainThread: share });
}

/** The processes of the machine's database and queue servers (PostgreSQL's backends, redis-server): what a set-up costs them. */
export function serviceProcesses(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const command = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      if (command === "postgres" || command === "redis-server") pids.push(pid);
    } catch {
      // Gone since the listing.
    }
  }
  return pids;
}

function cpuTicksOf(pid: number): number | undefined {
  const fields = statFields(pid);
  // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command name.
  return fields ? Number(fields[11]) + Number(fields[12]) : undefined;
}

/** The fields of /proc/<pid>/stat after the command name (which is in parentheses and may hold spaces). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    // Gone since the listing.
    return undefined;
  }
}
