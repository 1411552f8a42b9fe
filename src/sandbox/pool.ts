/**
 * Which runner serves which batch of calls.
 *
 * The isolation boundary is the owner: a runner serves one owner (and one
 * heap size) for life, and keeps many of that owner's bundles loaded
 * (runner/bundles.ts), so an owner's hundreds of components share a few warm
 * runners; different owners never share one. A batch goes to an idle runner
 * of its owner (one that has its bundle loaded first); when all of them are
 * busy, it shares the least busy one, unless that one already has
 * SHARE_BEFORE_NEW batches, the owner has fewer than `maxPerOwner`
 * runners and fewer than `busyBeforeSharing` runners are busy in all: then a
 * new one starts (batches in one runner are lanes that run side
 * by side, runner/lane.ts).
 *
 * The pool is sized by memory: each runner's own memory (its resident
 * anonymous pages: what it costs beyond the node binary that all runners
 * share) is measured, and new runners start only while the total fits
 * `memoryBudgetMb`. To make room, the least recently used idle runner, of
 * any owner, is stopped; when none is idle, new owners wait in arrival
 * order. Idle runners exit after idleMs. `spares` runners are kept started
 * with no owner, so that a new owner (or new code) does not wait for a
 * process to start; the first batch that takes one makes it its owner's.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import type { RunnerProcess, RunnerProcessOptions } from "./runner-process.js";
import type { SandboxError } from "./sandbox-error.js";

export type RunnerHooks = Pick<RunnerProcessOptions, "onExit" | "onFault">;

export interface PoolOptions {
  /** Memory of all runners together (measured, see above), in MB. */
  memoryBudgetMb: number;
  /** Runner processes at most, whatever memory allows. */
  maxRunners: number;
  /** Runners of one owner and heap size at most while all of them are busy; past it, batches share them. */
  maxPerOwner: number;
  /**
   * Busy runners in all past which no owner gets another runner (its batches
   * share the ones it has): the machine's cores are taken already, and more
   * processes would only compete for them.
   */
  busyBeforeSharing: number;
  idleMs: number;
  /** Runners kept started ahead, with no owner, at `spareMemoryMb`. */
  spares: number;
  spareMemoryMb: number;
  /** Starts a runner process with a heap of `memoryMb`. */
  spawn(memoryMb: number, hooks: RunnerHooks): RunnerProcess;
  /** Work a call left behind failed after the call ended: whose it was. */
  onLateFault(fault: { ownerId: string; bundleId: string; error: SandboxError }): void;
  logger: Logger | undefined;
}

export interface AcquireRequest {
  ownerId: string;
  memoryMb: number;
  bundle: { id: string; file: string };
  /** A runner of its own, fresh or idle, that no other batch shares while this one runs (a batch run again after a crash). */
  exclusive?: boolean;
}

/** See RunnerPool.usage. */
export interface RunnerPoolUsage {
  busy: number;
  idle: number;
  max: number;
  coldStarts: number;
}

interface Entry {
  runner: RunnerProcess;
  memoryMb: number;
  /** Whose runner it is (with its heap size, what batches it may take); null for a spare. */
  ownerId: string | null;
  /** Batches in progress. */
  active: number;
  exclusive: boolean;
  /** Its state is suspect (a late fault): it takes no new batch, and stops once its batches end. */
  retiring: boolean;
  stopping: boolean;
  lastUsed: number;
  idleTimer: NodeJS.Timeout | undefined;
  /** Bundle files it has run: batches of these go to it first. */
  bundles: Set<string>;
  lastBundleId: string | undefined;
  /** Its own memory when last measured, in bytes; an estimate until then. */
  memoryBytes: number;
  measuredAt: number;
  startedAt: number;
}

interface Waiter {
  request: AcquireRequest;
  resolve(runner: RunnerProcess): void;
  reject(error: Error): void;
}

const MB = 1024 * 1024;
/** /proc/<pid>/statm counts pages. */
const PAGE_BYTES = 4096;
/** What a runner is taken to cost before it is measured: about what an idle one measures on Node 20. */
const DEFAULT_RUNNER_BYTES = 24 * MB;
/** How often every runner's memory is read again (a /proc read each), and the budget enforced. */
const MEASURE_EVERY_MS = 2_000;
/** A spare that dies sooner than this after its start is a failure to start one: the next waits (doubling, up to the max). */
const SPARE_MIN_LIFE_MS = 2_000;
const SPARE_RETRY_MAX_MS = 30_000;
/** Batches an owner's least busy runner takes before the owner gets another runner. */
const SHARE_BEFORE_NEW = 2;
/** Affinity is a hint; past this many bundles a runner's list starts over. */
const MAX_AFFINITY = 4_096;

export class RunnerPool {
  private readonly options: PoolOptions;
  private readonly entries = new Map<RunnerProcess, Entry>();
  private waiters: Waiter[] = [];
  private closed = false;
  private readonly sweeper: NodeJS.Timeout;
  private spareFailures = 0;
  /** Batches that waited for a runner process to start (no warm one of their owner, no spare): see usage(). */
  private coldStarts = 0;

  constructor(options: PoolOptions) {
    this.options = options;
    this.sweeper = setInterval(() => this.sweep(), MEASURE_EVERY_MS);
    this.sweeper.unref();
  }

  /** A runner for the owner's batch; never another owner's. Rejects only when the pool is closed. */
  acquire(request: AcquireRequest): Promise<RunnerProcess> {
    if (this.closed) return Promise.reject(new Error("The sandbox is closed."));
    return new Promise((resolve, reject) => {
      this.waiters.push({ request, resolve, reject });
      this.pump();
    });
  }

  /** Hands the runner back after a batch. */
  release(runner: RunnerProcess): void {
    const entry = this.entries.get(runner);
    if (!entry) return;
    entry.active = Math.max(0, entry.active - 1);
    entry.exclusive = false;
    entry.lastUsed = performance.now();
    if (!runner.isAlive || this.closed) {
      void this.stopEntry(entry, "close");
      return;
    }
    if (entry.active === 0) {
      if (entry.retiring) {
        void this.stopEntry(entry, "retire");
        return;
      }
      if (entry.lastUsed - entry.measuredAt > MEASURE_EVERY_MS / 2) this.measure(entry);
      clearTimeout(entry.idleTimer);
      entry.idleTimer = setTimeout(() => void this.stopEntry(entry, "idle"), this.options.idleMs);
      entry.idleTimer.unref();
    }
    this.pump();
  }

  /** Starts spares up to `spares`, where memory allows without stopping anything. */
  refillSpares(): void {
    if (this.closed) return;
    let spares = [...this.entries.values()].filter((entry) => entry.ownerId === null && !entry.stopping).length;
    while (spares < this.options.spares && this.hasRoom()) {
      if (!this.start(null, this.options.spareMemoryMb)) return;
      spares += 1;
    }
  }

  /** Stops every runner and waits for them; calls still waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error("The sandbox was closed before the call could start."));
    await Promise.all([...this.entries.values()].map((entry) => this.stopEntry(entry, "close")));
  }

  private pump(): void {
    if (this.closed) return;
    const waiting: Waiter[] = [];
    // Each waiter is served when it can be; one that waits for memory does not hold up another owner's that can run now.
    for (const waiter of this.waiters) {
      const runner = this.serve(waiter);
      if (runner) waiter.resolve(runner);
      else waiting.push(waiter);
    }
    this.waiters = waiting;
    if (waiting.length > 0) this.makeRoom();
  }

  private serve(waiter: Waiter): RunnerProcess | undefined {
    const { request } = waiter;
    const mine = [...this.entries.values()].filter((entry) => entry.ownerId === request.ownerId && entry.memoryMb === request.memoryMb && this.usable(entry));
    const idle = mine.filter((entry) => entry.active === 0);
    const warm = idle.find((entry) => entry.bundles.has(request.bundle.file)) ?? idle[0];
    if (warm) return this.assign(warm, request);
    const shareable = request.exclusive ? [] : mine.filter((entry) => !entry.exclusive);
    const leastBusy = shareable.reduce<Entry | undefined>((best, entry) => (best && best.active <= entry.active ? best : entry), undefined);
    // Another runner for the owner only when each of its runners has work enough to keep a core busy: batches
    // mostly wait on I/O and interleave well in one runner, and starting processes for a burst that one runner
    // absorbs costs the machine more CPU (a process start is ~60 ms of it) than it saves.
    if (leastBusy && (mine.length >= this.options.maxPerOwner || leastBusy.active < SHARE_BEFORE_NEW || this.busyRunners() >= this.options.busyBeforeSharing)) {
      return this.assign(leastBusy, request);
    }
    const spare = this.takeSpare(request);
    const fresh = spare ?? (this.hasRoom() ? this.start(request.ownerId, request.memoryMb) : undefined);
    if (fresh && !spare) this.coldStarts += 1;
    if (fresh) return this.assign(fresh, request);
    // No room for another runner: share one of the owner's rather than wait.
    if (leastBusy) return this.assign(leastBusy, request);
    return undefined;
  }

  /**
   * The pool as an operator sees it: runners busy with a batch, idle ones
   * (spares included), the most it may have, and the batches so far that
   * waited for a process to start. Counted when asked, so that metrics cost
   * the pool nothing between scrapes.
   */
  usage(): RunnerPoolUsage {
    let busy = 0;
    let idle = 0;
    for (const entry of this.entries.values()) {
      if (entry.stopping) continue;
      if (entry.active > 0) busy += 1;
      else idle += 1;
    }
    return { busy, idle, max: this.options.maxRunners, coldStarts: this.coldStarts };
  }

  private busyRunners(): number {
    let busy = 0;
    for (const entry of this.entries.values()) if (entry.active > 0) busy += 1;
    return busy;
  }

  private usable(entry: Entry): boolean {
    return !entry.stopping && !entry.retiring && !entry.exclusive && entry.runner.isAlive;
  }

  private assign(entry: Entry, request: AcquireRequest): RunnerProcess {
    clearTimeout(entry.idleTimer);
    entry.idleTimer = undefined;
    entry.active += 1;
    entry.exclusive = request.exclusive === true;
    entry.lastUsed = performance.now();
    if (entry.bundles.size >= MAX_AFFINITY) entry.bundles.clear();
    entry.bundles.add(request.bundle.file);
    entry.lastBundleId = request.bundle.id;
    return entry.runner;
  }

  /** A spare, made the owner's; refilled in a later turn. */
  private takeSpare(request: AcquireRequest): Entry | undefined {
    if (request.memoryMb !== this.options.spareMemoryMb) return undefined;
    const spare = [...this.entries.values()].find((entry) => entry.ownerId === null && !entry.stopping && entry.runner.isAlive);
    if (!spare) return undefined;
    spare.ownerId = request.ownerId;
    setImmediate(() => this.refillSpares());
    return spare;
  }

  /** A new runner for `ownerId`, or a spare (null). */
  private start(ownerId: string | null, memoryMb: number): Entry | undefined {
    let runner: RunnerProcess;
    try {
      runner = this.options.spawn(memoryMb, this.hooks);
    } catch (error) {
      this.options.logger?.warn({ err: error }, "sandbox: a runner could not be started");
      return undefined;
    }
    const entry: Entry = {
      runner,
      memoryMb,
      ownerId,
      active: 0,
      exclusive: false,
      retiring: false,
      stopping: false,
      lastUsed: performance.now(),
      idleTimer: undefined,
      bundles: new Set(),
      lastBundleId: undefined,
      memoryBytes: this.newRunnerBytes(),
      measuredAt: 0,
      startedAt: performance.now(),
    };
    this.entries.set(runner, entry);
    this.options.logger?.debug({ pid: runner.pid, runners: this.entries.size, spare: ownerId === null }, "runner started");
    return entry;
  }

  private readonly hooks: RunnerHooks = {
    onExit: (runner) => this.forget(runner),
    onFault: (runner, error, bundleId) => {
      const entry = this.entries.get(runner);
      if (!entry) return;
      const owned = entry.ownerId !== null ? { ownerId: entry.ownerId, bundleId: bundleId ?? entry.lastBundleId } : undefined;
      if (owned?.bundleId !== undefined) this.options.onLateFault({ ownerId: owned.ownerId, bundleId: owned.bundleId, error });
      // Its calls in progress may end well; it takes no more, and goes when they have.
      entry.retiring = true;
      if (entry.active === 0) void this.stopEntry(entry, "retire");
    },
  };

  /** Whether one more runner fits the count and the memory budget. The first always does. */
  private hasRoom(): boolean {
    if (this.entries.size === 0) return true;
    if (this.entries.size >= this.options.maxRunners) return false;
    return this.usedBytes() + this.newRunnerBytes() <= this.options.memoryBudgetMb * MB;
  }

  private usedBytes(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.memoryBytes;
    return total;
  }

  /** The average of the runners measured so far, or the default before any. */
  private newRunnerBytes(): number {
    let total = 0;
    let count = 0;
    for (const entry of this.entries.values()) {
      if (entry.measuredAt === 0) continue;
      total += entry.memoryBytes;
      count += 1;
    }
    return count === 0 ? DEFAULT_RUNNER_BYTES : total / count;
  }

  /**
   * Owners wait for a runner: stop the least recently used idle one (spares
   * last), unless one is stopping already and will free its place.
   */
  private makeRoom(): void {
    const entries = [...this.entries.values()];
    if (entries.some((entry) => entry.stopping)) return;
    const idle = entries.filter((entry) => entry.active === 0);
    const victim = oldest(idle.filter((entry) => entry.ownerId !== null)) ?? oldest(idle);
    if (victim) void this.stopEntry(victim, "evict");
  }

  /** Reads every runner's memory, and stops idle runners while the total is over the budget. */
  private sweep(): void {
    for (const entry of this.entries.values()) if (!entry.stopping) this.measure(entry);
    let over = this.usedBytes() - this.options.memoryBudgetMb * MB;
    const idle = [...this.entries.values()].filter((entry) => entry.active === 0 && !entry.stopping).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const entry of idle) {
      if (over <= 0) break;
      over -= entry.memoryBytes;
      void this.stopEntry(entry, "evict");
    }
  }

  /** Resident anonymous memory of the runner's node process (/proc/<pid>/statm: resident minus shared pages). */
  private measure(entry: Entry): void {
    const pid = entry.runner.nodePid;
    if (pid === undefined) return;
    try {
      const [, resident, shared] = readFileSync(`/proc/${pid}/statm`, "utf8").split(" ").map(Number);
      if (resident === undefined || shared === undefined || !Number.isFinite(resident - shared)) return;
      entry.memoryBytes = (resident - shared) * PAGE_BYTES;
      entry.measuredAt = performance.now();
    } catch {
      // Gone, or no /proc here: the estimate stands.
    }
  }

  private stopEntry(entry: Entry, reason: "idle" | "evict" | "retire" | "close"): Promise<void> {
    clearTimeout(entry.idleTimer);
    if (entry.active === 0 || reason === "close") entry.stopping = true;
    return entry.runner.stop(reason);
  }

  /** The process is gone: its place is free. */
  private forget(runner: RunnerProcess): void {
    const entry = this.entries.get(runner);
    if (!entry) return;
    clearTimeout(entry.idleTimer);
    this.entries.delete(runner);
    this.options.logger?.debug({ pid: runner.pid, runners: this.entries.size }, "runner gone");
    if (entry.ownerId === null && !entry.stopping) this.spareDied(entry);
    this.pump();
  }

  /**
   * A spare died untaken. Soon after its start, that is a machine that cannot
   * start runners now: the next one waits longer each time, not a busy loop.
   */
  private spareDied(entry: Entry): void {
    const shortLived = performance.now() - entry.startedAt < SPARE_MIN_LIFE_MS;
    this.spareFailures = shortLived ? this.spareFailures + 1 : 0;
    const delay = shortLived ? Math.min(SPARE_RETRY_MAX_MS, 100 * 2 ** this.spareFailures) : 0;
    setTimeout(() => this.refillSpares(), delay).unref();
  }
}

function oldest(entries: Entry[]): Entry | undefined {
  return entries.reduce<Entry | undefined>((lru, entry) => (lru && lru.lastUsed <= entry.lastUsed ? lru : entry), undefined);
}
