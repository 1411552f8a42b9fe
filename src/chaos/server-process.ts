/**
 * A Runnel server as a child process, for the chaos run: started on a data
 * folder and port, SIGKILLed, and started again on the same ones.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const RUNNEL_BIN = fileURLToPath(new URL("../../bin/runnel.js", import.meta.url));

export interface ServerProcessOptions {
  dataDir: string;
  port: number;
  env: Record<string, string>;
  /** How long a start may take. Default 30 s. */
  startTimeoutMs?: number;
  /** Node's own options before the script (a bench's `--cpu-prof`, which NODE_OPTIONS does not take). */
  nodeArgs?: string[];
}

export class ServerProcess {
  private child: ChildProcess | null = null;
  url = "";

  constructor(private readonly options: ServerProcessOptions) {}

  /** The running server's process id; undefined before it starts or once it is gone. */
  get pid(): number | undefined {
    const child = this.child;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  /** Starts the server and resolves once it listens. */
  async start(): Promise<void> {
    const child = spawn(process.execPath, [...(this.options.nodeArgs ?? []), RUNNEL_BIN, "server"], {
      cwd: this.options.dataDir,
      env: { PATH: process.env.PATH ?? "", RUNNEL_DATA_DIR: this.options.dataDir, RUNNEL_PORT: String(this.options.port), RUNNEL_HOST: "127.0.0.1", RUNNEL_LOG_FORMAT: "json", RUNNEL_RATE_LIMIT_PER_MINUTE: "0", ...this.options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-8_000);
    };
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    let exited: string | null = null;
    child.once("exit", (code, signal) => (exited = String(code ?? signal)));
    // Ready when /healthz answers: the log level may hide the "listening" line.
    const url = `http://127.0.0.1:${this.options.port}`;
    const deadline = Date.now() + (this.options.startTimeoutMs ?? 30_000);
    for (;;) {
      if (exited !== null) throw new Error(`the server exited (${exited}) before it listened:\n${output}`);
      if (Date.now() > deadline) throw new Error(`the server did not start within ${this.options.startTimeoutMs ?? 30_000} ms:\n${output}`);
      try {
        const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
        if (response.ok) break;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    this.url = url;
  }

  /** SIGKILL: no shutdown, no flush; resolves once the process is gone. */
  kill(): Promise<void> {
    return this.signal("SIGKILL");
  }

  /** SIGTERM, as an operator stops it. */
  stop(): Promise<void> {
    return this.signal("SIGTERM");
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill(signal);
    await gone;
  }
}
