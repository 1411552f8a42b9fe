import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";

/** A server under test in a child process of its own, answering POSTs at `url`. */
export interface ChildServer {
  url: string;
  /** The server's process id (its CPU is measured). */
  pid: number;
  stop(): Promise<void>;
}

/** A loopback port free right now (the child binds it a moment later; nothing else on a bench machine races for it). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, "close");
  return port;
}

/**
 * Starts `node <args>` and waits until a POST of `body` to `url` answers 200,
 * so that load never lands on a server still loading. The child's output is
 * kept (the last few KB) only to explain a failure to start.
 */
export async function startChildServer(name: string, args: string[], url: string, body: string, timeoutMs = 60_000): Promise<ChildServer> {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  // If the bench dies without reaching its `finally`, the child must not outlive it and hold the port.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const stop = async () => {
    process.removeListener("exit", killOnExit);
    await terminate(child);
  };
  try {
    await answers(child, url, body, timeoutMs);
  } catch (error) {
    await stop();
    throw new Error(`${name} did not start: ${(error as Error).message}${output.trim() ? `\n--- its output ---\n${output.trim()}` : ""}`);
  }
  return { url, pid: child.pid!, stop };
}

async function answers(child: ChildProcess, url: string, body: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`it exited (${child.exitCode ?? child.signalCode}) before answering ${url}`);
    try {
      const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
      last = `${answer.status} ${await answer.text()}`.slice(0, 200);
      if (answer.status === 200) return;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s (last: ${last})`);
}

/** SIGTERM, then SIGKILL if it has not gone within 5 s. */
async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await gone;
  clearTimeout(timer);
}
