import { afterAll, describe, expect, it } from "vitest";
import type { HttpResponse } from "../../src/sandbox/http-response.js";
import { readRunnerMessage, type StepContext } from "../../src/sandbox/protocol.js";
import type { InvokeCallbacks, InvokeResult } from "../../src/sandbox/sandbox.js";
import { SandboxFixture } from "./helpers.js";

const fixture = new SandboxFixture();
afterAll(() => fixture.close());

const CONTEXT: StepContext = { deadline: 1_900_000_000_000, run: { runs: 2, context: { retry: "yes" } }, workflowId: "p_wf1", stepId: "code", id: "run_1" };

/** Runs `source` (a CommonJS module) as a step. */
function runStep(
  source: string,
  request: { steps?: Record<string, unknown>; props?: Record<string, unknown>; context?: StepContext } = {},
  callbacks?: InvokeCallbacks,
): Promise<InvokeResult> {
  const call = { kind: "step" as const, steps: request.steps ?? { trigger: { event: {} } }, context: request.context ?? CONTEXT };
  return fixture.invoke(fixture.bundle(source), { call, props: request.props ?? {} }, callbacks);
}

describe("a step call", () => {
  it("returns the value, the exports and the summary; reads steps, props, methods and $.context", async () => {
    const result = await runStep(
      `module.exports = { default: defineComponent({
        props: { greeting: { type: "string" } },
        methods: { shout(text) { return text.toUpperCase() + "!"; } },
        async run({ steps, $ }) {
          $.export("name", this.shout(this.greeting));
          $.export("nested", { list: [1, 2], at: new Date(0) });
          $.export("dropped", 1);
          $.export("dropped", undefined);
          $.export("$summary", "Greeted " + steps.trigger.event.x);
          return { x: steps.trigger.event.x, context: $.context };
        },
      }) };`,
      { steps: { trigger: { event: { x: 42 } } }, props: { greeting: "hi" } },
    );
    expect(result.error).toBeUndefined();
    expect(result.value).toEqual({ x: 42, context: CONTEXT });
    expect(result.step).toEqual({
      exports: { name: "HI!", nested: { list: [1, 2], at: "1970-01-01T00:00:00.000Z" } },
      summary: "Greeted 42",
      exit: null,
      sends: [],
    });
  });

  it("runs an action: run({ $ }) with props through this", async () => {
    const result = await runStep(`module.exports = defineAction({ type: "action", key: "a-add", props: { n: { type: "integer" } }, run({ $ }) { $.export("$summary", "added"); return this.n + 1; } });`, {
      props: { n: 1 },
    });
    expect(result).toMatchObject({ ok: true, value: 2, step: { summary: "added", exports: {} } });
  });

  it("refuses exports that are not JSON or badly named, with a clear error", async () => {
    const result = await runStep(`module.exports = { run({ $ }) {
      const errors = [];
      for (const [name, value] of [["m", new Map()], ["", 1], [5, 1], ["$summary", 5], ["$return_value", 1]]) {
        try { $.export(name, value); } catch (error) { errors.push(error.message); }
      }
      return errors;
    } };`);
    expect(result.value).toEqual([
      `$.export("m"): the value is not JSON-serializable: found a Map at the top level.`,
      "$.export(name, value): name must be a non-empty string, got an empty string.",
      "$.export(name, value): name must be a non-empty string, got number.",
      `$.export("$summary", text): the summary must be a string, got number.`,
      `$.export(): "$return_value" is reserved for the step's return value; return it instead.`,
    ]);
    expect(result.step?.exports).toEqual({});

    const uncaught = await runStep(`module.exports = { run({ $ }) { $.export("fn", { f() {} }); } };`);
    expect(uncaught.ok).toBe(false);
    expect(uncaught.error).toMatchObject({ code: "UserError", name: "TypeError" });
    expect(uncaught.error?.message).toContain(`$.export("fn"): the value is not JSON-serializable: found a function at .f`);
  });

  it("ends the step at $.flow.exit(), returned or not; code after it does not run", async () => {
    const source = `module.exports = { async run({ steps, $ }) {
      $.export("before", 1);
      if (steps.trigger.event.returned) return $.flow.exit("returned reason");
      if (steps.trigger.event.bare) $.flow.exit();
      else await Promise.resolve().then(() => $.flow.exit("not returned"));
      console.log("after exit");
      $.export("after", true);
      return "after";
    } };`;
    const returned = await runStep(source, { steps: { trigger: { event: { returned: true } } } });
    expect(returned).toMatchObject({ ok: true, step: { exports: { before: 1 }, exit: { reason: "returned reason" } } });
    expect(returned.value).toBeUndefined();

    const notReturned = await runStep(source, { steps: { trigger: { event: {} } } });
    expect(notReturned.ok).toBe(true);
    expect(notReturned.value).toBeUndefined();
    expect(notReturned.step).toEqual({ exports: { before: 1 }, summary: null, exit: { reason: "not returned" }, sends: [] });
    expect(notReturned.logs).toEqual([]);

    const bare = await runStep(source, { steps: { trigger: { event: { bare: true } } } });
    expect(bare.step?.exit).toEqual({ reason: null });
  });

  it("records an exit that the step's own try/catch swallowed, with the value it then returns", async () => {
    const result = await runStep(`module.exports = { run({ $ }) {
      try { $.flow.exit("first"); } catch (error) { $.export("caught", error.name); }
      try { $.flow.exit("second"); } catch {}
      return "went on";
    } };`);
    expect(result).toMatchObject({ ok: true, value: "went on", step: { exports: { caught: "FlowExit" }, exit: { reason: "first" } } });
  });

  it("sends $.respond() to the host at once, with a numeric-string status, once (a second is ignored with a log line)", async () => {
    const responses: Array<{ response: HttpResponse; at: number }> = [];
    const result = await runStep(
      `module.exports = { async run({ $ }) {
        const errors = [];
        try { $.respond({ status: 99 }); } catch (error) { errors.push(error.message); }
        try { $.respond({ status: 200, immediate: "yes" }); } catch (error) { errors.push(error.message); }
        $.respond({ immediate: true, status: "202", headers: { "x-step": $.context.stepId }, body: { accepted: true } });
        await new Promise((resolve) => setTimeout(resolve, 200));
        try { $.respond({ status: 200 }); } catch (error) { errors.push(error.message); }
        return errors;
      } };`,
      {},
      { onRespond: (response) => responses.push({ response, at: Date.now() }) },
    );
    const answeredAt = Date.now();
    expect(result.value).toEqual([
      "$.respond(): status must be an integer from 100 to 599, got 99.",
      "$.respond(): immediate must be a boolean, got string.",
    ]);
    // The second answer cannot reach the caller: ignored with a line in the logs, not thrown (API-COMPAT).
    expect(result.logs.map((log) => log.text)).toContainEqual(expect.stringMatching(/^\$\.respond\(\) was ignored: an earlier call already answered/));
    expect(responses.map(({ response }) => response)).toEqual([
      { status: 202, headers: { "x-step": "code", "content-type": "application/json; charset=utf-8" }, body: '{"accepted":true}' },
    ]);
    // Delivered while the step was still waiting, not with its result.
    expect(responses[0]?.at).toBeLessThanOrEqual(answeredAt - 150);
  });

  it("collects each $.send.* in call order and rejects bad payloads, naming the field", async () => {
    const result = await runStep(`module.exports = { run({ $ }) {
      $.send.http({ method: "post", url: "https://example.test/hook", auth: { username: "u", password: "p" }, data: { a: 1 }, headers: { "x-n": 1 }, params: { q: "s" }, extra: 1 });
      $.send.email({ subject: "Hi", text: "body" });
      $.send.s3({ bucket: "b", prefix: "logs/", payload: { n: 1 } });
      $.send.emit({ raw_event: { name: "e" } });
      $.send.sse({ channel: "updates", payload: [1, 2] });
      const bad = [
        ["http", "not an object"],
        ["http", { url: "https://example.test" }],
        ["http", { method: "GET", url: "ftp://example.test" }],
        ["http", { method: "GET", url: "/relative" }],
        ["http", { method: "GET", url: "https://example.test", auth: { username: "u" } }],
        ["http", { method: "GET", url: "https://example.test", headers: { h: {} } }],
        ["email", { subject: 5 }],
        ["s3", { bucket: "", prefix: "p", payload: 1 }],
        ["s3", { bucket: "b", prefix: "p" }],
        ["emit", { raw_event: new Map() }],
        ["sse", { payload: 1 }],
      ];
      const errors = [];
      for (const [type, payload] of bad) {
        try { $.send[type](payload); } catch (error) { errors.push(error.name + ": " + error.message); }
      }
      return errors;
    } };`);
    expect(result.step?.sends).toEqual([
      {
        type: "http",
        payload: { method: "POST", url: "https://example.test/hook", auth: { username: "u", password: "p" }, data: { a: 1 }, headers: { "x-n": "1" }, params: { q: "s" } },
      },
      { type: "email", payload: { subject: "Hi", text: "body" } },
      { type: "s3", payload: { bucket: "b", prefix: "logs/", payload: { n: 1 } } },
      { type: "emit", payload: { raw_event: { name: "e" } } },
      { type: "sse", payload: { channel: "updates", payload: [1, 2] } },
    ]);
    expect(result.value).toEqual([
      "TypeError: $.send.http() takes an object { method, url, auth?, data?, headers?, params? }, got a string.",
      "TypeError: $.send.http(): method must be a non-empty string, got undefined.",
      'TypeError: $.send.http(): url must be an http or https URL, got "ftp://example.test".',
      'TypeError: $.send.http(): url must be an absolute URL, got "/relative".',
      "TypeError: $.send.http(): auth: password must be a string, got undefined.",
      "TypeError: $.send.http(): headers.h must be a string, a number or a boolean, got an object.",
      "TypeError: $.send.email(): subject must be a string, got a number.",
      "TypeError: $.send.s3(): bucket must be a non-empty string, got an empty string.",
      "TypeError: $.send.s3(): payload is required.",
      "TypeError: $.send.emit(): raw_event is not JSON-serializable: found a Map at the top level.",
      "TypeError: $.send.sse(): channel must be a non-empty string, got undefined.",
    ]);
  });

  it("reports a throwing step's error together with what it exported and sent before", async () => {
    const result = await runStep(`module.exports = { async run({ $ }) {
      $.export("progress", 1);
      $.export("$summary", "half way");
      $.send.emit({ raw_event: { n: 1 } });
      await Promise.resolve();
      throw new RangeError("step failed");
    } };`);
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: "UserError", name: "RangeError", message: "step failed" });
    expect(result.step).toEqual({ exports: { progress: 1 }, summary: "half way", exit: null, sends: [{ type: "emit", payload: { raw_event: { n: 1 } } }] });
  });

  it("says plainly that $.flow.delay, rerun and suspend are not supported", async () => {
    const result = await runStep(`module.exports = { run({ $ }) {
      const errors = [];
      for (const call of [() => $.flow.rerun(1000, {}), () => $.flow.suspend(1000)]) {
        try { call(); } catch (error) { errors.push(error.message); }
      }
      $.export("errors", errors);
      return $.flow.delay(1000);
    } };`);
    expect(result.ok).toBe(false);
    expect(result.error?.message).toBe("$.flow.delay() is not supported by this server yet: a step cannot pause or rerun its workflow run.");
    expect(result.step?.exports.errors).toEqual([
      "$.flow.rerun() is not supported by this server yet: a step cannot pause or rerun its workflow run.",
      "$.flow.suspend() is not supported by this server yet: a step cannot pause or rerun its workflow run.",
    ]);
  });

  it("leaves the outcome off the other calls", async () => {
    const result = await fixture.invoke(fixture.bundle(`module.exports = { run() { return 1; } };`));
    expect(result.value).toBe(1);
    expect(result.step).toBeUndefined();
  });
});

describe("a step's outcome on the wire", () => {
  const outcome = { exports: { a: 1 }, summary: null, exit: { reason: null }, sends: [{ type: "sse", payload: { channel: "c", payload: 1 } }] };

  it("is read from a result and an error", () => {
    expect(readRunnerMessage({ type: "result", id: 1, value: 2, db: null, retire: false, step: outcome })).toEqual({ type: "result", id: 1, value: 2, db: null, retire: false, step: outcome });
    const error = { code: "UserError", name: "Error", message: "m" };
    expect(readRunnerMessage({ type: "error", id: 1, error, db: null, step: outcome })).toMatchObject({ type: "error", step: outcome });
  });

  it("makes the message malformed when it is not well formed", () => {
    for (const step of [
      { ...outcome, summary: 5 },
      { ...outcome, exit: { reason: 5 } },
      { ...outcome, exports: [] },
      { ...outcome, sends: [{ type: "ftp", payload: {} }] },
      { ...outcome, sends: [{ type: "http", payload: "x" }] },
      null,
    ]) {
      expect(readRunnerMessage({ type: "result", id: 1, value: 2, db: null, retire: false, step })).toBeUndefined();
    }
  });
});
