import { expect } from "vitest";
import { spawn, type ChildProcess, type ChildProcessByStdio } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

export const RUNNEL_BIN = fileURLToPath(new URL("../../bin/runnel.js", import.meta.url));

/** The result of a CLI run that must have succeeded; its stderr is in the failure message when it did not. */
export function succeeded(result: CliResult): CliResult {
  expect(result.code, `exit code ${result.code}; stderr: ${result.stderr}`).toBe(0);
  return result;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `runnel` binary to completion, feeding `input` on stdin. */
function spawnRunnel(
  args: string[],
  options: { env: Record<string, string>; cwd?: string | undefined },
  stdin: "pipe" | "ignore",
): ChildProcessByStdio<Writable | null, Readable, Readable> {
  return spawn(process.execPath, [RUNNEL_BIN, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: [stdin, "pipe", "pipe"],
  }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
}

export function runCli(args: string[], options: { env: Record<string, string>; cwd?: string; input?: string; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnRunnel(args, options, "pipe");
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`runnel ${args.join(" ")} did not finish in time.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(options.input ?? "");
  });
}

/**
 * Runs the CLI's own `main` in this process, as `bin/runnel.js` would, with
 * the same arguments, environment (only PATH and `env`, as runCli gives the
 * child), working folder, piped stdin and captured output. For the tests of
 * what the commands do; a node started per call costs about half a second of
 * CPU, and the spawn itself is covered by the tests that keep runCli (the
 * binary, its exit codes, prompts on a terminal, Ctrl-C). Calls run one at
 * a time, even when started together: the working folder is the process's.
 */
export function runCliInProcess(args: string[], options: { env: Record<string, string>; cwd?: string; input?: string; timeoutMs?: number }): Promise<CliResult> {
  const result = inProcessQueue.then(() => runMainOnce(args, options));
  inProcessQueue = result.catch(() => undefined);
  return result;
}

let inProcessQueue: Promise<unknown> = Promise.resolve();

async function runMainOnce(args: string[], options: { env: Record<string, string>; cwd?: string; input?: string; timeoutMs?: number }): Promise<CliResult> {
  const { main } = await import("../../src/cli/main.js");
  let stdout = "";
  let stderr = "";
  const collect = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const io = {
    stdout: collect((text) => (stdout += text)),
    stderr: collect((text) => (stderr += text)),
    stdin: Readable.from([options.input ?? ""]),
  };
  const previousCwd = process.cwd();
  if (options.cwd) process.chdir(options.cwd);
  let timer: NodeJS.Timeout | undefined;
  try {
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`runnel ${args.join(" ")} did not finish in time.\nstdout: ${stdout}\nstderr: ${stderr}`)),
        options.timeoutMs ?? 20_000,
      );
    });
    const code = await Promise.race([main([process.execPath, RUNNEL_BIN, ...args], { PATH: process.env.PATH ?? "", ...options.env }, io), timedOut]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
    process.chdir(previousCwd);
  }
}

/** A long-running child (the server) whose output is collected as it comes. */
export interface RunningChild {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout or stderr. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startCli(args: string[], options: { env: Record<string, string>; cwd: string }): RunningChild {
  const child = spawnRunnel(args, options, "ignore");
  let out = "";
  let err = "";
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((check) => check());
  child.stdout.on("data", (chunk) => ((out += chunk), notify()));
  child.stderr.on("data", (chunk) => ((err += chunk), notify()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => (notify(), resolve({ code, signal }))),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${pattern}.\nstdout: ${out}\nstderr: ${err}`));
        }, timeoutMs);
        const check = () => {
          const match = pattern.exec(out) ?? pattern.exec(err);
          if (match) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`the process ended before ${pattern} appeared.\nstdout: ${out}\nstderr: ${err}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/**
 * Runs the real `runnel` binary on a pseudo-terminal (util-linux `script`),
 * so that it sees a terminal and may ask; `input` is typed into it. Output
 * comes as a terminal shows it: the typed answer echoed, lines ending in CRLF.
 */
export function runCliOnTerminal(args: string[], options: { env: Record<string, string>; cwd?: string; input: string; timeoutMs?: number }): Promise<CliResult> {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, RUNNEL_BIN, ...args].map(quote).join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: options.cwd, env: { PATH: process.env.PATH ?? "", ...options.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`runnel ${args.join(" ")} on a terminal did not finish in time.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: stdout.replace(/\r\n/g, "\n"), stderr });
    });
    // Typed once the program asks: a question ends in ": ".
    let typed = false;
    child.stdout.on("data", () => {
      if (!typed && /\]: $/.test(stdout)) {
        typed = true;
        child.stdin.write(options.input);
      }
    });
  });
}
