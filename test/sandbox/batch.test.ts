import { afterAll, describe, expect, it } from "vitest";
import type { InvokeRequest } from "../../src/sandbox/sandbox.js";
import { LIMITS, SandboxFixture } from "./helpers.js";

const fixture = new SandboxFixture();
afterAll(() => fixture.close());

/**
 * Counts its calls in its store, emits the count, and misbehaves as the
 * event says. Calls of a batch run one after the other in one runner, which
 * holds their endings and answers the batch in one message.
 */
const COUNTER = `
  module.exports = {
    name: "counter",
    props: { db: "$.service.db" },
    async run(event) {
      const count = (this.db.get("count") ?? 0) + 1;
      this.db.set("count", count);
      switch (event.do) {
        case "loop": while (true) {}
        case "oom": { const hoard = []; while (true) hoard.push(new Array(100000).fill(count)); }
        case "exit": process.exit(2);
        case "throw": throw new Error("call " + count + " failed");
        case "sleep": await new Promise((resolve) => setTimeout(resolve, event.ms));
      }
      console.log("call", count);
      this.$emit({ count }, { summary: "call " + count });
      return count;
    },
  };
`;

const bundle = fixture.bundle(COUNTER);

function batch(events: Array<Record<string, unknown>>, limits: Partial<InvokeRequest["limits"]> = {}): InvokeRequest[] {
  return events.map((event) => ({ bundle, call: { kind: "run", event }, props: {}, dbProps: ["db"], db: {}, limits: { ...LIMITS, ...limits } }));
}

describe("a batch of calls in one runner", () => {
  it("runs the calls in order over one store, each with its own emits, logs and value", async () => {
    const results = await fixture.sandbox.invokeBatch(batch([{}, {}, {}, {}, {}]));
    expect(results.map((result) => result.value)).toEqual([1, 2, 3, 4, 5]);
    expect(results.map((result) => result.emits.map((emit) => emit.event))).toEqual([[{ count: 1 }], [{ count: 2 }], [{ count: 3 }], [{ count: 4 }], [{ count: 5 }]]);
    expect(results.map((result) => result.logs.map((log) => log.text))).toEqual([["call 1"], ["call 2"], ["call 3"], ["call 4"], ["call 5"]]);
    expect(results.at(-1)?.db).toEqual({ count: 5 });
  });

  it("times each call as the runner measured it, though the batch answers at once", async () => {
    const results = await fixture.sandbox.invokeBatch(batch([{}, { do: "sleep", ms: 120 }, {}]));
    expect(results.map((result) => result.value)).toEqual([1, 2, 3]);
    expect(results[1]!.durationMs).toBeGreaterThanOrEqual(110);
    expect(results[0]!.durationMs).toBeLessThan(100);
    expect(results[2]!.durationMs).toBeLessThan(100);
  });

  it("keeps a failing call's error to itself", async () => {
    const results = await fixture.sandbox.invokeBatch(batch([{}, { do: "throw" }, {}]));
    expect(results.map((result) => result.ok)).toEqual([true, false, true]);
    expect(results[1]!.error).toMatchObject({ code: "UserError", message: "call 2 failed" });
    expect(results[2]!.value).toBe(3);
  });

  // A call that kills its runner takes the endings the runner held with it: the calls
  // whose endings were lost run again on a fresh runner, each answering on its own, so
  // the error goes to the call at fault and no other call's result is lost.
  // The store goes on from what the calls before left: a call killed from outside loses its writes
  // with its runner; one that exits had its writes reported with its error, as a call that throws.
  it.each([
    // A limit the calls after it meet on a fresh runner under CI's load too (600 ms did not, once).
    ["runs past its time limit", { do: "loop" }, "Timeout", { timeoutMs: 2_000 }, [1, 2, undefined, 3, 4]],
    ["runs out of memory", { do: "oom" }, "OutOfMemory", { memoryMb: 64, timeoutMs: 15_000 }, [1, 2, undefined, 3, 4]],
    ["exits the process", { do: "exit" }, "ProcessExit", {}, [1, 2, undefined, 4, 5]],
  ] as const)("blames only the call that %s; the calls around it answer", async (_what, misbehaving, code, limits, values) => {
    const results = await fixture.sandbox.invokeBatch(batch([{}, {}, misbehaving, {}, {}], limits));
    expect(results.map((result) => result.error?.code ?? "ok")).toEqual(["ok", "ok", code, "ok", "ok"]);
    expect(results.map((result) => result.value)).toEqual(values);
    expect(results.map((result) => result.emits.length)).toEqual([1, 1, 0, 1, 1]);
    // And the runner after it is healthy.
    const [after] = await fixture.sandbox.invokeBatch(batch([{}]));
    expect(after!.value).toBe(1);
  });
});
