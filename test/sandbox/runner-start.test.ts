/**
 * A runner's start is not charged to its calls: a call's time limit runs from
 * the runner's "ready" on (sent before any user code), and a runner that never
 * gets there is stopped after its own start limit, its calls failing with an
 * error that says their code never ran. The runner here is a stand-in that
 * speaks the real wire (frames on descriptor 3) and takes as long to start
 * as it is told: a real runner's start cannot be slowed at will.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RunnerProcess, type CallAnswer, type CallRequest } from "../../src/sandbox/runner-process.js";

const work = mkdtempSync(join(tmpdir(), "runnel-runner-start-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Starts after argv[2] ms (never when "never"), then answers each call after argv[3] ms with "done". */
const STAND_IN = `
const { Socket } = require("node:net");
const [startMs, callMs] = process.argv.slice(2);
const channel = new Socket({ fd: 3, readable: true, writable: true });
const send = (message) => {
  const json = Buffer.from(JSON.stringify(message));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(json.length, 0);
  channel.write(Buffer.concat([header, json]));
};
let buffered = Buffer.alloc(0);
channel.on("data", (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
    const length = buffered.readUInt32BE(0);
    const message = JSON.parse(buffered.subarray(4, 4 + length).toString());
    buffered = buffered.subarray(4 + length);
    if (message.type === "invoke") (started ? run : waiting.push.bind(waiting))(message.id);
  }
});
channel.on("end", () => process.exit(0));
// As a real runner, it reads nothing before it has started.
let started = false;
const waiting = [];
const run = (id) => setTimeout(() => send({ type: "result", id, value: "done", db: null, retire: false }), Number(callMs));
if (startMs !== "never") setTimeout(() => { send({ type: "ready" }); started = true; waiting.splice(0).forEach(run); }, Number(startMs));
`;
const standIn = join(work, "stand-in.cjs");
writeFileSync(standIn, STAND_IN);

function runner(startMs: number | "never", callMs: number, startLimitMs?: number): { process: RunnerProcess; gone: Promise<void> } {
  const dir = mkdtempSync(join(work, "r-"));
  let markGone: () => void = () => {};
  const gone = new Promise<void>((resolve) => (markGone = resolve));
  const runnerProcess = new RunnerProcess({
    command: { command: process.execPath, args: [standIn, String(startMs), String(callMs)], cwd: dir },
    dir,
    memoryMb: 64,
    logger: undefined,
    ...(startLimitMs === undefined ? {} : { startLimitMs }),
    onExit: () => markGone(),
    onFault: () => undefined,
  });
  return { process: runnerProcess, gone };
}

function request(timeoutMs: number): CallRequest {
  return {
    call: { kind: "inspect" },
    props: {},
    dbProps: [],
    db: {},
    limits: { timeoutMs, memoryMb: 64, maxLogBytes: 1024 * 1024 },
    onRespond: undefined,
  };
}

function outcomeOf(answer: CallAnswer) {
  if (answer === null || typeof answer === "string") throw new Error(`the call has no outcome: ${String(answer)}`);
  return answer;
}

describe("a runner's start", () => {
  it("does not count toward a call's time limit: a call sent while the runner starts gets its whole limit after", async () => {
    // 1.2 s to start, 0.3 s to run, a 1 s limit: charged from the send, the call would be stopped at 1 s.
    const { process: slow, gone } = runner(1200, 300);
    const started = Date.now();
    const [answer] = slow.callEach([request(1000)], { bundleFile: "bundle.cjs" });
    const outcome = outcomeOf(await answer!);
    expect(outcome.error).toBeUndefined();
    expect(outcome).toMatchObject({ ok: true, value: "done" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(slow.isAlive).toBe(true);
    await slow.stop("close");
    await gone;
  });

  it("still stops a call that passes its limit once the runner has started", async () => {
    const { process: started, gone } = runner(0, 2000);
    const [answer] = started.callEach([request(500)], { bundleFile: "bundle.cjs" });
    const outcome = outcomeOf(await answer!);
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatchObject({ code: "Timeout", message: expect.stringContaining("500 ms") });
    await gone;
  });

  it("is limited on its own: a runner that never starts is stopped, and every call it had says its code never ran", async () => {
    const { process: stuck, gone } = runner("never", 0, 700);
    const began = Date.now();
    const answers = stuck.callEach([request(60_000), request(60_000)], { bundleFile: "bundle.cjs", concurrent: true });
    for (const answer of answers) {
      const outcome = outcomeOf(await answer);
      expect(outcome.ok).toBe(false);
      expect(outcome.error).toMatchObject({ code: "RunnerCrashed", message: expect.stringMatching(/did not start within 0\.7 s, so the call's code never ran/) });
    }
    // Its start limit, not the calls' minute.
    expect(Date.now() - began).toBeLessThan(30_000);
    await gone;
    expect(stuck.isAlive).toBe(false);
  });
});
