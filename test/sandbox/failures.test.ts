import { afterAll, describe, expect, it } from "vitest";
import { SandboxFixture } from "./helpers.js";

const fixture = new SandboxFixture();
afterAll(() => fixture.close());

/** A component that misbehaves as the event says, and answers normally otherwise. */
const MISBEHAVING = `
  module.exports = {
    name: "misbehaving",
    async run(event) {
      switch (event.do) {
        case "loop": while (true) {}
        case "oom": { const hoard = []; while (true) hoard.push(new Array(100000).fill(event)); }
        case "exit": process.exit(3);
        case "throw string": throw "a string";
        case "throw object": throw { reason: "nope" };
        case "throw": throw new RangeError("out of range");
        case "reject": await Promise.resolve(); throw new Error("async failure");
        case "unhandled": Promise.reject(new Error("forgotten")); await new Promise((r) => setTimeout(r, 5000)); return "finished";
        case "unhandled sync return": Promise.reject("forgotten too"); return "finished";
        case "uncaught": setTimeout(() => { throw new Error("from a timer"); }, 10); await new Promise((r) => setTimeout(r, 500)); return "finished";
        case "flood lines": for (let i = 0; i < 1000000; i++) console.log("0123456789"); return "printed";
        case "flood write": for (let i = 0; i < 10; i++) process.stdout.write("x".repeat(1024 * 1024)); return "printed";
        case "return circular": { const o = {}; o.self = o; return o; }
        default: return "ok";
      }
    },
  };
`;

async function expectHealthyAfter(bundle: ReturnType<typeof fixture.bundle>): Promise<void> {
  const next = await fixture.invoke(bundle);
  expect(next.error).toBeUndefined();
  expect(next.value).toBe("ok");
}

describe("failures inside a runner", () => {
  const bundle = fixture.bundle(MISBEHAVING);

  it("stops a busy loop at the time limit, and the next call works", async () => {
    const started = Date.now();
    const result = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "loop" } }, limits: { timeoutMs: 500, memoryMb: 128, maxLogBytes: 1024 } });
    expect(result.error?.code).toBe("Timeout");
    expect(result.error?.message).toContain("500 ms");
    expect(Date.now() - started).toBeLessThan(3000);
    await expectHealthyAfter(bundle);
  });

  it("reports running out of memory, and the next call works", async () => {
    const result = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "oom" } }, limits: { timeoutMs: 15_000, memoryMb: 64, maxLogBytes: 1024 * 1024 } });
    expect(result.error?.code).toBe("OutOfMemory");
    expect(result.error?.message).toContain("64 MB");
    // V8's crash report (GC trace, native stack) is left out of the logs.
    expect(result.logs.some((entry) => entry.text.includes("JavaScript heap"))).toBe(false);
    await expectHealthyAfter(bundle);
  });

  it("reports process.exit() as ProcessExit", async () => {
    const result = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "exit" } } });
    expect(result.error).toMatchObject({ code: "ProcessExit" });
    expect(result.error?.message).toContain("process.exit(3)");
    await expectHealthyAfter(bundle);
  });

  it("keeps a thrown Error's name, message and stack; says what was thrown otherwise", async () => {
    const thrown = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "throw" } } });
    expect(thrown.error).toMatchObject({ code: "UserError", name: "RangeError", message: "out of range" });
    expect(thrown.error?.stack).toContain("component.js");
    expect(thrown.error?.stack).not.toContain("runner.cjs");
    const rejected = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "reject" } } });
    expect(rejected.error).toMatchObject({ code: "UserError", name: "Error", message: "async failure" });
    const string = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "throw string" } } });
    expect(string.error).toMatchObject({ code: "NonErrorThrown", message: "The component threw a string instead of an Error: 'a string'" });
    const object = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "throw object" } } });
    expect(object.error).toMatchObject({ code: "NonErrorThrown", message: "The component threw an object instead of an Error: { reason: 'nope' }" });
    const circular = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "return circular" } } });
    expect(circular.error?.message).toMatch(/^The value the component returned is not JSON-serializable: Converting circular structure/);
  });

  it("fails the call on an unhandled rejection or an uncaught exception of its own", async () => {
    const waiting = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "unhandled" } } });
    expect(waiting.error).toMatchObject({ code: "UnhandledRejection", message: "Unhandled promise rejection: forgotten" });
    // Failed at the rejection, without waiting for run's own 5 s.
    expect(waiting.durationMs).toBeLessThan(2500);
    const returned = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "unhandled sync return" } } });
    expect(returned.error).toMatchObject({ code: "UnhandledRejection" });
    expect(returned.error?.message).toContain("forgotten too");
    const uncaught = await fixture.invoke(bundle, { call: { kind: "run", event: { do: "uncaught" } } });
    expect(uncaught.error).toMatchObject({ code: "UserError", message: "from a timer" });
    await expectHealthyAfter(bundle);
  });

  it.each([["flood lines"], ["flood write"]])("stops a call that prints past its log limit (%s)", async (what) => {
    const maxLogBytes = 64 * 1024;
    const before = process.memoryUsage().rss;
    const result = await fixture.invoke(bundle, { call: { kind: "run", event: { do: what } }, limits: { timeoutMs: 10_000, memoryMb: 128, maxLogBytes } });
    expect(result.error?.code).toBe("OutputFlood");
    const kept = result.logs.reduce((sum, entry) => sum + Buffer.byteLength(entry.text) + 1, 0);
    expect(kept).toBeLessThanOrEqual(maxLogBytes);
    expect(process.memoryUsage().rss - before).toBeLessThan(50 * 1024 * 1024);
    await expectHealthyAfter(bundle);
  });
});

describe("bundles that are not components", () => {
  it.each([
    ["throws at load", `throw new Error("broken at load");`, "The component module failed to load: Error: broken at load"],
    ["requires a missing package", `require("left-pad-that-is-not-installed"); module.exports = {};`, "Cannot find module 'left-pad-that-is-not-installed'"],
    ["exports a function", `module.exports = function () {};`, "The module must export a component object"],
    ["has a run that is not a function", `module.exports = { name: "x", run: 5 };`, "The component's run must be a function, found a number."],
    ["has a method that is not a function", `module.exports = { name: "x", methods: { a: 1 }, run() {} };`, "The component's methods.a must be a function"],
  ])("reports InvalidComponent when the module %s", async (_case, source, message) => {
    const bundle = fixture.bundle(source);
    const invoked = await fixture.invoke(bundle);
    expect(invoked.error?.code).toBe("InvalidComponent");
    expect(invoked.error?.message).toContain(message);
    const inspected = await fixture.sandbox.inspect(bundle);
    expect(inspected).toMatchObject({ ok: false, error: { code: "InvalidComponent" } });
  });

  it("unwraps an ES module compiled to CommonJS and provides the define* globals", async () => {
    const bundle = fixture.bundle(`
      Object.defineProperty(exports, "__esModule", { value: true });
      exports.default = defineAction({ name: "esm", run() { return [defineComponent(1), defineSource(2), defineApp(3)]; } });
    `);
    const result = await fixture.invoke(bundle);
    expect(result.value).toEqual([1, 2, 3]);
  });
});
