import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

/**
 * A step's props are checked as a source's configured props are: when the
 * workflow is saved (a 400 naming the step and the prop), and, for values
 * that are `{{ }}` expressions, once they are evaluated in a run (the step
 * fails with a ConfigurationError naming the step, the prop, the expression
 * and the value's type).
 */
let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "props")).key;
  const published = await call(server.url, "POST", "/v1/components/registry", {
    key,
    json: {
      filename: "repeat.mjs",
      component_code: `export default defineComponent({ key: "props-repeat", name: "Repeat", version: "1.0.0", type: "action",
        props: { word: { type: "string", options: ["hi", "bye"] }, times: { type: "integer", min: 1, max: 3, default: 1 } },
        run() { return this.word.repeat(this.times); } });`,
    },
  });
  if (published.status !== 201) throw new Error(`publishing failed: ${JSON.stringify(published.body)}`);
});
afterAll(() => server.close());

const CODE = `export default defineComponent({
  props: {
    count: { type: "integer", min: 1, max: 10 },
    color: { type: "string", options: ["red", "green"], optional: true },
    tags: { type: "string[]", optional: true },
    flag: { type: "boolean", default: false },
  },
  run() { return { count: this.count, color: this.color, tags: this.tags, flag: this.flag }; },
})`;

const save = (props: Record<string, unknown>, step: Record<string, unknown> = { code: CODE }) =>
  call(server.url, "POST", "/v1/workflows", { key, json: { name: "Checked", trigger: { type: "http" }, steps: [{ name: "first", code: "export default { run() { return 1; } }" }, { name: "use", ...step, props }] } });

describe("a step's props when the workflow is saved", () => {
  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ["a wrong type", { count: "three" }, "count", /^Step "use": prop "count" must be a whole number; got a string\.$/],
    ["a required prop left out", {}, "count", /^Step "use": prop "count" is required: give it a whole number\.$/],
    ["an unknown prop", { count: 1, colour: "red" }, "colour", /^Step "use": Unknown prop "colour"; its code's props are: count, color, tags, flag\.$/],
    ["a value below min", { count: 0 }, "count", /^Step "use": prop "count" must be at least 1; got 0\.$/],
    ["a value above max", { count: 11 }, "count", /^Step "use": prop "count" must be at most 10; got 11\.$/],
    ["a value outside the options", { count: 1, color: "blue" }, "color", /^Step "use": prop "color": "blue" is not one of its options \("red", "green"\)\.$/],
    ["a single value for an array", { count: 1, tags: "a" }, "tags", /^Step "use": prop "tags" must be a list \(JSON array\) of strings; got a string\.$/],
    ["a wrong array item", { count: 1, tags: ["a", 2] }, "tags", /^Step "use": prop "tags" item 1 must be a string; got 2\.$/],
    ["text around an expression for an integer", { count: "n={{steps.first.$return_value}}" }, "count", /^Step "use": prop "count" must be a whole number, but text with a \{\{ \}\} expression inside always makes a string/],
  ])("refuses %s with a 400 naming the step and the prop", async (_rule, props, prop, message) => {
    const refused = await save(props);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe(`steps[1].props.${prop}`);
    expect(refused.body.error.message).toMatch(message);
  });

  it("checks a published action's props the same way", async () => {
    const refused = await save({ word: "hello" }, { key: "props-repeat" });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("steps[1].props.word");
    expect(refused.body.error.message).toBe('Step "use": prop "word": "hello" is not one of its options ("hi", "bye").');
    const tooMany = await save({ word: "hi", times: 4 }, { key: "props-repeat" });
    expect(tooMany.body.error).toMatchObject({ code: "ValidationError", details: { field: "steps[1].props.times" } });
  });

  it("checks an update's steps too, and an update that leaves the steps out keeps them", async () => {
    const workflow = await createWorkflow(server, key, { name: "Updated", trigger: { type: "http" }, steps: [{ name: "use", code: CODE, props: { count: 2 } }] });
    const refused = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: [{ name: "use", code: CODE, props: { count: 2, extra: 1 } }] } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("steps[0].props.extra");
    expect((await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { name: "Updated again" } })).status).toBe(200);
  });

  it("accepts what fits: defaults for required props, expressions alone (checked when run), the published action's default", async () => {
    expect((await save({ count: "{{steps.first.$return_value}}", tags: ["a", "{{steps.trigger.event.method}}"] })).status).toBe(200);
    expect((await save({ word: "hi" }, { key: "props-repeat" })).status).toBe(200);
  });
});

describe("a step's props when the run evaluates them", () => {
  it("runs a step whose expressions give values that fit", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Fits",
      trigger: { type: "http" },
      steps: [{ name: "use", code: CODE, props: { count: "{{steps.trigger.event.body.n}}", color: "{{steps.trigger.event.body.c}}" } }],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 4, c: "green" }) });
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (list) => list.length === 1 && list[0].status !== "running", "the run");
    expect(runs[0]).toMatchObject({ status: "success", steps: [{ $return_value: { count: 4, color: "green", flag: false } }] });
  });

  it.each<[string, unknown, RegExp]>([
    ["a string where a whole number goes", { n: "four", c: "red" }, /^Step "use": prop "count" is \{\{steps\.trigger\.event\.body\.n\}\}, which gave a string, and it must be a whole number\./],
    ["a number past max", { n: 40, c: "red" }, /^Step "use": prop "count" is \{\{steps\.trigger\.event\.body\.n\}\}, which gave a number, and it must be at most 10\./],
    ["a value outside the options", { n: 1, c: "blue" }, /^Step "use": prop "color" is \{\{steps\.trigger\.event\.body\.c\}\}, which gave a string that is not one of its options \("red", "green"\)\./],
    ["nothing for a required prop", { c: "red" }, /^Step "use": prop "count" is \{\{steps\.trigger\.event\.body\.n\}\}, which gave nothing; the prop is required\./],
  ])("fails the step with a ConfigurationError for %s", async (_rule, body, message) => {
    const workflow = await createWorkflow(server, key, {
      name: "Misfit",
      trigger: { type: "http" },
      steps: [
        { name: "use", code: CODE, props: { count: "{{steps.trigger.event.body.n}}", color: "{{steps.trigger.event.body.c}}" } },
        { name: "after", code: "export default { run() { return 'ran'; } }" },
      ],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (listed) => listed.data.length === 1, "the error");
    expect(errors.data[0].event.error).toMatchObject({ code: "ConfigurationError", cellId: workflow.steps[0].id });
    expect(errors.data[0].event.error.msg).toMatch(message);
    const runs = await runsOf(server, key, workflow.id);
    expect(runs[0].status).toBe("error");
    expect(runs[0].steps.map((step: { status: string }) => step.status)).toEqual(["error", "skipped"]);
  });
});
