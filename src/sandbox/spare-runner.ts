/**
 * One runner started ahead of need, so that new code (a deploy, a `dev` save)
 * does not wait for a process to start (about 60 ms, most of a cold deploy).
 * A runner may read only its bundle's folder, fixed when it starts; the spare
 * starts on an empty folder of its own, and taking it copies the bundle's
 * folder in before the runner is told to load it.
 */
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { RunnerProcess, RunnerProcessOptions } from "./runner-process.js";

export interface SpareRunnerOptions {
  /** Where spare folders are made. */
  root: string;
  memoryMb: number;
  /** Starts a runner that may read `dir`, with the hooks it has until it is taken. */
  start(dir: string, hooks: Pick<RunnerProcessOptions, "onExit" | "onFault">): RunnerProcess;
  logger: Logger | undefined;
}

type Hooks = Pick<RunnerProcessOptions, "onExit" | "onFault">;

export class SpareRunner {
  private spare: { runner: RunnerProcess; dir: string } | null = null;
  private closed = false;

  constructor(private readonly options: SpareRunnerOptions) {}

  /**
   * The spare, now serving `bundleFile`'s folder (copied into its own), with
   * the pool's hooks; null when there is none ready or the heap size differs.
   */
  take(bundleFile: string, memoryMb: number, hooks: Hooks): RunnerProcess | null {
    const spare = this.spare;
    if (!spare || memoryMb !== this.options.memoryMb || !spare.runner.isAlive) return null;
    this.spare = null;
    try {
      cpSync(join(bundleFile, ".."), spare.dir, { recursive: true });
    } catch (error) {
      this.options.logger?.debug({ err: error }, "sandbox: could not hand the spare runner its bundle");
      void spare.runner.stop("close");
      return null;
    }
    spare.runner.adopt(join(spare.dir, baseName(bundleFile)), {
      onExit: (runner) => {
        hooks.onExit(runner);
        removeFolder(spare.dir);
      },
      onFault: hooks.onFault,
    });
    return spare.runner;
  }

  /** Starts a new spare when there is none. */
  refill(): void {
    if (this.closed || this.spare) return;
    const dir = join(this.options.root, `spare-${randomBytes(6).toString("hex")}`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      const runner = this.options.start(dir, {
        onExit: () => {
          if (this.spare?.runner === runner) this.spare = null;
          removeFolder(dir);
        },
        onFault: () => void runner.stop("retire"),
      });
      this.spare = { runner, dir };
    } catch (error) {
      this.options.logger?.debug({ err: error }, "sandbox: could not start a spare runner");
      removeFolder(dir);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const spare = this.spare;
    this.spare = null;
    if (spare) await spare.runner.stop("close");
  }
}

function baseName(file: string): string {
  return file.slice(file.lastIndexOf("/") + 1);
}

function removeFolder(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // Left for the next start's clean-up of the work folder; nothing depends on it.
  }
}
