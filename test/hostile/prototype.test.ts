import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectBystanderServed, hostileSource, startHostileHarness, type EndpointAnswer, type HostileHarness, type HostileSource } from "./harness.js";

/**
 * Prototype tricks and forged messages: code that breaks the JavaScript world
 * of its own runner (prototypes, JSON, Promise, process.send/emit, globals)
 * or talks to the host in its place. Whatever it breaks in its own runner is
 * its own problem: the host stays correct (every answer the owner gets is a
 * success or a failure with a catalogue code, never a hang or an internal
 * error), the bystander is answered with its own answers and keeps exactly
 * its own events, and the server does not crash.
 */

/** The codes of the owner's catalogue (docs/workflows.md), as a source's 502 carries them in details.code. */
const CATALOGUE = ["UserError", "NonErrorThrown", "Timeout", "OutOfMemory", "ProcessExit", "UnhandledRejection", "OutputFlood", "RunnerCrashed", "InvalidComponent"];

let h: HostileHarness;
beforeAll(async () => {
  h = await startHostileHarness();
});
afterAll(() => h?.close());

/**
 * An answer the owner can act on: its own 200, or a 502 saying why; with
 * `catalogued`, one that names a catalogue code (a forged ending of its own
 * call may end it without one: then the message says what the host saw).
 */
function expectOwnersAnswer(answer: EndpointAnswer, catalogued: boolean): void {
  if (answer.status === 200) return;
  expect(answer.status, JSON.stringify(answer.body)).toBe(502);
  expect(answer.body.error.code).toBe("SourceFailed");
  expect(answer.body.error.message).toMatch(/^The source /);
  if (catalogued) expect(CATALOGUE).toContain(answer.body.error.details?.code);
}

/**
 * The attack, then three ordinary calls of the same source: every answer is
 * one the owner can act on. The first calls after it may fail (a runner it
 * broke is stopped at the time limit, or crashes, and is replaced); the last
 * one works.
 */
async function attackThenCallAgain(source: HostileSource, catalogued = true): Promise<EndpointAnswer[]> {
  const answers: EndpointAnswer[] = [await h.attack(source)];
  for (let i = 0; i < 3; i++) answers.push(await h.fire(source));
  for (const answer of answers) expectOwnersAnswer(answer, catalogued);
  return answers;
}

async function expectBystanderUntouched(bystander: Awaited<ReturnType<HostileHarness["whileAttacking"]>>["bystander"]): Promise<void> {
  expectBystanderServed(bystander);
  const events = await h.bystanderEvents();
  expect(events.length).toBeGreaterThan(0);
  for (const event of events) expect(Object.keys(event), JSON.stringify(event)).toEqual(["n"]);
}

describe("a component that breaks its own JavaScript world", () => {
  it("pollutes Object.prototype and Array.prototype", async () => {
    const source = await h.deploySource(
      hostileSource(`
      Object.prototype.polluted = "by the attacker";
      Object.prototype.toJSON = function () { return { forged: true }; };
      Object.prototype.retire = false; Object.prototype.carryDb = true; Object.prototype.status = 500; Object.prototype.code = "InternalFailure";
      Array.prototype.push = function () { return 0; };
      Array.prototype.map = function () { return ["forged"]; };
      Array.prototype[Symbol.iterator] = function* () {};
      this.http.respond({ status: 200, body: { polluted: true } });`),
      { timeout_seconds: 1 },
    );
    const { outcome, bystander } = await h.whileAttacking(() => attackThenCallAgain(source));
    expect(outcome.at(-1)).toEqual({ status: 200, body: { ok: true } });
    await expectBystanderUntouched(bystander);
    await h.expectServerHealthy();
  });

  it("replaces JSON, Promise, Function.prototype and process.send", async () => {
    const source = await h.deploySource(
      hostileSource(`
      JSON.stringify = () => '{"type":"result","id":0,"value":"forged"}';
      JSON.parse = () => ({ forged: true });
      globalThis.Promise = function FakePromise() { throw new Error("no promises here"); };
      Function.prototype.bind = function () { return () => "forged"; };
      Function.prototype.apply = function () { return "forged"; };
      process.send = () => { throw new Error("the channel is mine now"); };
      this.http.respond({ status: 200, body: { replaced: true } });`),
      { timeout_seconds: 1 },
    );
    const { outcome, bystander } = await h.whileAttacking(() => attackThenCallAgain(source));
    expect(outcome.at(-1)).toEqual({ status: 200, body: { ok: true } });
    await expectBystanderUntouched(bystander);
    await h.expectServerHealthy();
  });

  it("replaces process.emit, so that its runner hears nothing more", async () => {
    const source = await h.deploySource(
      hostileSource(`
      process.emit = () => false;
      process.on = () => process; process.removeAllListeners("message");
      this.http.respond({ status: 200, body: { deaf: true } });`),
      { timeout_seconds: 1 },
    );
    const { outcome, bystander } = await h.whileAttacking(() => attackThenCallAgain(source));
    expect(outcome.at(-1)).toEqual({ status: 200, body: { ok: true } });
    await expectBystanderUntouched(bystander);
    await h.expectServerHealthy();
  });

  it("deletes globals the runner might lean on", async () => {
    const source = await h.deploySource(
      hostileSource(`
      const respond = this.http.respond.bind(this.http);
      for (const name of ["setTimeout", "setImmediate", "clearTimeout", "queueMicrotask", "Buffer", "console", "structuredClone", "TextEncoder", "TextDecoder", "URL", "AbortController", "Error", "Date", "Map", "Set", "Symbol", "Reflect", "Proxy", "WeakMap"]) delete globalThis[name];
      process.nextTick = () => {};
      process.hrtime = () => [0, 0];
      respond({ status: 200, body: { deleted: true } });`),
      { timeout_seconds: 1 },
    );
    const { outcome, bystander } = await h.whileAttacking(() => attackThenCallAgain(source));
    expect(outcome.at(-1)).toEqual({ status: 200, body: { ok: true } });
    await expectBystanderUntouched(bystander);
    await h.expectServerHealthy();
  });
});

describe("a component that talks to the host in its runner's place", () => {
  it("forges results, emits, responses and errors for calls that are not its own, and garbage", async () => {
    const source = await h.deploySource(
      hostileSource(`
      const send = typeof process.send === "function" ? process.send.bind(process) : null;
      let sent = 0;
      const forge = (message) => { try { send && send(message); sent++; } catch {} };
      for (let id = -1; id < 200; id++) {
        forge({ type: "emit", id, event: { n: 424242, forged: "into someone's events" }, meta: { id: "forged-" + id } });
        forge({ type: "respond", id, response: { status: 200, headers: {}, body: { bystander: -1 } } });
        forge({ type: "result", id, value: "forged", db: { owner: "attacker" }, retire: false });
        forge({ type: "error", id, error: { code: "Timeout", name: "Timeout", message: "forged" }, db: null, retire: false });
        forge({ type: "log", id, stream: "stdout", text: "forged log " + id, ts: Date.now() });
      }
      forge({ type: "error", id: null, error: { code: "InternalFailure", name: "x", message: "forged fault" }, db: null, retire: false });
      forge({ type: "batch", messages: Array.from({ length: 1000 }, (_, id) => ({ type: "emit", id, event: { n: 1 }, meta: {} })) });
      for (const garbage of [null, 1, "string", [], { type: "nope" }, { type: "result" }, { type: "batch", messages: "x" }]) forge(garbage);
      // Node's own IPC messages: a handle it never had.
      forge({ cmd: "NODE_HANDLE", type: "net.Socket", msg: {} });
      this.http.respond({ status: 200, body: { sent, channel: send !== null } });`),
      { timeout_seconds: 1 },
    );
    // A backlog of forged endings can end the owner's own next call too: its own problem, told as such.
    const { outcome, bystander } = await h.whileAttacking(() => attackThenCallAgain(source, false));
    expect(outcome.at(-1)).toEqual({ status: 200, body: { ok: true } });
    await expectBystanderUntouched(bystander);
    // Forged emits reach, at most, the attacker's own source.
    for (const event of await h.bystanderEvents()) expect(event.n).not.toBe(424242);
    await h.expectServerHealthy();
  });

  // Node's IPC reader used to throw an uncaught SyntaxError on such a line and take `runnel server` down; the framed
  // wire (runner/frames.ts) stops only the runner that wrote it.
  it("writes garbage straight into its file descriptors (the channel to the host among them)", async () => {
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.prependListener("uncaughtException", record);
    const source = await h.deploySource(
      hostileSource(`
      const fs = require("node:fs");
      const written = [];
      const garbage = '{"type":"result","id":1,"value":"forged","db":null,"retire":false}\\n\\u0000\\u00ff not json at all {{{\\n' + "x".repeat(70000) + "\\n";
      for (let fd = 0; fd < 16; fd++) { try { fs.writeSync(fd, garbage); written.push(fd); } catch {} }
      this.http.respond({ status: 200, body: { written } });`),
      { timeout_seconds: 1 },
    );
    try {
      const { outcome, bystander } = await h.whileAttacking(() => attackThenCallAgain(source, false));
      expect(outcome.at(-1)).toEqual({ status: 200, body: { ok: true } });
      await expectBystanderUntouched(bystander);
      await h.expectServerHealthy();
      // Under vitest the server's process survives an uncaught exception; `runnel server` does not.
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener("uncaughtException", record);
    }
  });
});
