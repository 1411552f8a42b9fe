import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../helpers/ports.js";

const RUNNEL_BIN = fileURLToPath(new URL("../../bin/runnel.js", import.meta.url));

/**
 * `runnel server` binds its port first thing, then migrates, starts its
 * runners and records itself before it serves. A SIGTERM in that time used
 * to kill it at once (its signal handlers came after the start), leaving its
 * row in the process registry to show lost. It now finishes starting and
 * stops cleanly.
 */
describe("runnel server asked to stop while it starts", () => {
  let dir: string;
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("finishes its start, then stops cleanly with exit code 0", async () => {
    dir = await mkdtemp(join(tmpdir(), "runnel-stop-start-"));
    const port = await freePort();
    const child = spawn(process.execPath, [RUNNEL_BIN, "server"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", RUNNEL_DATA_DIR: dir, RUNNEL_PORT: String(port), RUNNEL_HOST: "127.0.0.1", RUNNEL_LOG_FORMAT: "json", RUNNEL_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    // The port accepts connections (held unread) from the first moment of the start: the signal goes then.
    const deadline = Date.now() + 20_000;
    while (!(await accepts(port))) {
      if (Date.now() > deadline) throw new Error(`the server never bound its port:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    child.kill("SIGTERM");
    const { code, signal } = await exited;
    expect({ code, signal }, output).toEqual({ code: 0, signal: null });
    expect(output).toMatch(/a stop was asked during the start/);
    expect(output).toMatch(/stopped cleanly/);
  }, 40_000);
});

/** Whether something accepts a connection on the port now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
