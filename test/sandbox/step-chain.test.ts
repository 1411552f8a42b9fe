import { afterAll, describe, expect, it } from "vitest";
import { workflowBundleCode } from "../../src/engine/workflows/workflow-bundle.js";
import type { ChainStep, StepContext } from "../../src/sandbox/protocol.js";
import type { InvokeResult } from "../../src/sandbox/sandbox.js";
import type { HttpResponse } from "../../src/sandbox/http-response.js";
import { SandboxFixture } from "./helpers.js";

const fixture = new SandboxFixture();
afterAll(() => fixture.close());

const CONTEXT: StepContext = { deadline: 1_900_000_000_000, run: { runs: 1 }, workflowId: "p_wf", stepId: "c_0", id: "run_1" };

/** A workflow bundle of these CommonJS step modules, run as one `steps` call over `props` per step. */
function runChain(
  modules: string[],
  props: Array<Record<string, unknown>> = [],
  options: { timeoutMs?: number; onRespond?: (response: HttpResponse) => void } = {},
): Promise<InvokeResult> {
  const bundle = fixture.bundle(workflowBundleCode(modules));
  const steps: ChainStep[] = modules.map((_, index) => ({ index, id: `c_${index}`, name: `s${index}`, props: props[index] ?? {}, field: `steps[${index}]` }));
  return fixture.invoke(
    bundle,
    { call: { kind: "steps", steps, scope: { trigger: { event: { n: 2 } } }, context: CONTEXT }, ...(options.timeoutMs ? { limits: { timeoutMs: options.timeoutMs, memoryMb: 128, maxLogBytes: 1 << 20 } } : {}) },
    options.onRespond ? { onRespond: options.onRespond } : undefined,
  );
}

describe("a steps call (one workflow run's sandboxed steps in one call)", () => {
  it("runs the steps in order, each seeing the earlier ones' results through expressions and steps, and reports each", async () => {
    const result = await runChain(
      [
        "module.exports = { run({ steps, $ }) { console.log('first'); $.export('double', steps.trigger.event.n * 2); $.export('$summary', 'doubled'); return 'a'; } };",
        "module.exports = { props: { value: { type: 'integer' }, text: { type: 'string' } }, run({ steps }) { console.log('second'); return { value: this.value, text: this.text, seen: steps.s0.$return_value }; } };",
      ],
      [{}, { value: "{{steps.s0.double}}", text: "n is {{steps.trigger.event.n}}" }],
    );
    expect(result.error).toBeUndefined();
    expect(result.chain).toHaveLength(2);
    expect(result.chain![0]).toMatchObject({ index: 0, value: "a", step: { exports: { double: 4 }, summary: "doubled" }, logsEnd: 1 });
    expect(result.chain![1]).toMatchObject({ index: 1, value: { value: 4, text: "n is 2", seen: "a" }, logsEnd: 2 });
    expect(result.logs.map((log) => log.text)).toEqual(["first", "second"]);
  });

  it("stops at a step that throws: its error is in its report, later steps do not run", async () => {
    const result = await runChain([
      "module.exports = { run() { return 1; } };",
      "module.exports = { run() { throw new Error('kaput'); } };",
      "module.exports = { run() { throw new Error('must not run'); } };",
    ]);
    expect(result.chain!.map((done) => done.index)).toEqual([0, 1]);
    expect(result.chain![1]!.error).toMatchObject({ code: "UserError", message: "kaput" });
  });

  it("stops after a step that exits", async () => {
    const result = await runChain(["module.exports = { run({ $ }) { return $.flow.exit('done early'); } };", "module.exports = { run() { return 2; } };"]);
    expect(result.chain).toHaveLength(1);
    expect(result.chain![0]!.step.exit).toEqual({ reason: "done early" });
  });

  it("fails a step whose expression cannot be read as a ConfigurationError naming the prop", async () => {
    const result = await runChain(["module.exports = { props: { x: { type: 'string' } }, run() { return this.x; } };"], [{ x: "{{ steps.s0( }}" }]);
    expect(result.chain![0]!.error).toMatchObject({ code: "ConfigurationError" });
    expect(result.chain![0]!.error!.message).toContain("steps[0].props.x");
  });

  // The time limit covers the whole call: long enough that the first step is done well within it on a loaded machine
  // (at 500 ms, a CI run with three test files at once had the runner stopped before the first step reported).
  it("keeps what the earlier steps reported when the runner dies in a later one", async () => {
    const result = await runChain(["module.exports = { run() { return 'kept'; } };", "module.exports = { run() { return new Promise(() => {}); } };"], [], { timeoutMs: 2_500 });
    expect(result.chain).toHaveLength(1);
    expect(result.chain![0]!.value).toBe("kept");
    expect(result.error).toMatchObject({ code: "Timeout" });
  });

  it("keeps what the earlier steps reported when a later one never returns, looping without yielding", async () => {
    // The reports leave in a write shared with other runs (runner/channel.ts); a step's code runs only after the report before it left.
    const result = await runChain(["module.exports = { run() { console.log('before'); return 'kept'; } };", "module.exports = { run() { while (true) {} } };"], [], { timeoutMs: 2_500 });
    expect(result.chain).toHaveLength(1);
    expect(result.chain![0]!.value).toBe("kept");
    expect(result.logs.map((log) => log.text)).toEqual(["before"]);
    expect(result.error).toMatchObject({ code: "Timeout" });
  });

  it("answers the HTTP caller from any step, once", async () => {
    const responses: HttpResponse[] = [];
    const result = await runChain(
      ["module.exports = { async run({ $ }) { await $.respond({ status: 202, body: 'early' }); } };", "module.exports = { run() { return 'after'; } };"],
      [],
      { onRespond: (response) => responses.push(response) },
    );
    expect(responses).toEqual([expect.objectContaining({ status: 202, body: "early" })]);
    expect(result.chain![1]!.value).toBe("after");
  });
});

describe("steps calls sent side by side (concurrent)", () => {
  const slowStep = "module.exports = { async run({ steps }) { console.log('start ' + steps.trigger.event.n); await new Promise((resolve) => setTimeout(resolve, 300)); console.log('end ' + steps.trigger.event.n); return steps.trigger.event.n; } };";
  const request = (bundle: ReturnType<typeof fixture.bundle>, n: number, timeoutMs = 10_000) => ({
    bundle,
    call: { kind: "steps" as const, steps: [{ index: 0, id: "c_0", name: "s0", props: {}, field: "steps[0]" }], scope: { trigger: { event: { n } } }, context: CONTEXT },
    props: {},
    dbProps: [],
    db: {},
    limits: { timeoutMs, memoryMb: 128, maxLogBytes: 1 << 20 },
  });

  it("lets calls that wait on I/O wait together, each with its own logs", async () => {
    const bundle = fixture.bundle(workflowBundleCode([slowStep]));
    const results = await fixture.sandbox.invokeBatch([1, 2, 3, 4].map((n) => request(bundle, n)), [], { concurrent: true });
    expect(results.map((result) => result.chain?.[0]?.value)).toEqual([1, 2, 3, 4]);
    results.forEach((result, index) => expect(result.logs.map((log) => log.text)).toEqual([`start ${index + 1}`, `end ${index + 1}`]));
    // Side by side: every call started before any of them ended.
    const starts = results.map((result) => result.logs[0]!.ts);
    const ends = results.map((result) => result.logs[1]!.ts);
    expect(Math.max(...starts)).toBeLessThanOrEqual(Math.min(...ends));
  });

  it("keeps the first step of a run whose second step loops without yielding, while runs beside it finish", async () => {
    const modules = ["module.exports = { run({ steps }) { return 'first ' + steps.trigger.event.n; } };", "module.exports = { run({ steps }) { if (steps.trigger.event.n === 1) while (true) {} return 'second ' + steps.trigger.event.n; } };"];
    const bundle = fixture.bundle(workflowBundleCode(modules));
    const twoSteps = (n: number, timeoutMs: number) => {
      const base = request(bundle, n, timeoutMs);
      return { ...base, call: { ...base.call, steps: modules.map((_, index) => ({ index, id: `c_${index}`, name: `s${index}`, props: {}, field: `steps[${index}]` })) } };
    };
    const results = await fixture.sandbox.invokeBatch([twoSteps(1, 500), twoSteps(2, 5_000), twoSteps(3, 5_000), twoSteps(4, 5_000)], [], { concurrent: true });
    expect(results[0]!.error).toMatchObject({ code: "Timeout" });
    expect(results[0]!.chain!.map((done) => done.value)).toEqual(["first 1"]);
    for (const [index, result] of results.slice(1).entries()) expect(result.chain!.map((done) => done.value)).toEqual([`first ${index + 2}`, `second ${index + 2}`]);
  });

  it("runs the runs of a batch over the steps they share (sent once), and a call with steps of its own over those", async () => {
    const bundle = fixture.bundle(workflowBundleCode(["module.exports = { props: { tag: { type: 'string' } }, run({ steps }) { return this.tag + ' ' + steps.trigger.event.n; } };"]));
    const sharedSteps: ChainStep[] = [{ index: 0, id: "c_0", name: "s0", props: { tag: "shared {{steps.trigger.event.n}}" }, field: "steps[0]" }];
    const ownSteps: ChainStep[] = [{ index: 0, id: "c_0", name: "s0", props: { tag: "own" }, field: "steps[0]" }];
    const withSteps = (n: number, steps: ChainStep[]) => {
      const base = request(bundle, n);
      return { ...base, call: { ...base.call, steps } };
    };
    for (const concurrent of [true, false]) {
      const results = await fixture.sandbox.invokeBatch([withSteps(1, sharedSteps), withSteps(2, ownSteps), withSteps(3, sharedSteps)], [], { concurrent });
      expect(results.map((result) => result.chain?.[0]?.value)).toEqual(["shared 1 1", "own 2", "shared 3 3"]);
    }
  });

  it("fails only the call that runs past its time limit; the call caught beside it runs again and answers", async () => {
    const bundle = fixture.bundle(workflowBundleCode(["module.exports = { async run({ steps }) { if (steps.trigger.event.n === 1) while (true) {} await new Promise((r) => setTimeout(r, 50)); return 'late'; } };"]));
    const [stuck, beside] = await fixture.sandbox.invokeBatch([request(bundle, 1, 400), request(bundle, 2, 5_000)], [], { concurrent: true });
    expect(stuck!.error).toMatchObject({ code: "Timeout" });
    expect(beside!.error).toBeUndefined();
    expect(beside!.chain![0]!.value).toBe("late");
    // The next call gets a fresh runner.
    const [next] = await fixture.sandbox.invokeBatch([request(fixture.bundle(workflowBundleCode([slowStep])), 5)], [], { concurrent: true });
    expect(next!.chain![0]!.value).toBe(5);
  });
});
