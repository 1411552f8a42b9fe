import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, runsOf, waitFor } from "./helpers.js";

/**
 * Runs as the API shows them: the listing (paged, newest first) and one run
 * with its trigger event, each step's result, exports, summary, logs and
 * timing; code steps in each module form; step props with expressions.
 */

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "runner")).key;
});
afterAll(() => server.close());

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

describe("GET /v1/workflows/<id>/runs and GET /v1/runs/<id>", () => {
  it("records each step's return value, exports, summary, logs and timing, and lists runs newest first in pages", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Recorded",
      trigger: { type: "http" },
      steps: [
        {
          name: "first",
          code: `export default defineComponent({
            async run({ steps, $ }) {
              console.log("first saw", steps.trigger.event.body.n);
              console.error("a line on stderr");
              $.export("doubled", steps.trigger.event.body.n * 2);
              $.export("$summary", "doubled " + steps.trigger.event.body.n);
              return { n: steps.trigger.event.body.n };
            },
          })`,
        },
        {
          name: "second",
          code: `export default defineComponent({
            async run({ steps }) {
              console.log("second got", steps.first.doubled);
              return steps.first.$return_value.n + steps.first.doubled;
            },
          })`,
        },
      ],
    });

    const eventIds: string[] = [];
    for (const n of [1, 2, 3]) {
      const answer = await post(workflow.trigger.endpoint_url, { n });
      expect(answer.status).toBe(200);
      // One at a time, so that each run is recorded after the previous one.
      const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === n, `run ${n}`);
      eventIds.push(runs[0].trigger.event_id);
    }

    const firstPage = await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=2`, { key });
    expect(firstPage.status).toBe(200);
    expect(firstPage.body.page_info).toMatchObject({ total_count: 3, count: 2 });
    expect(firstPage.body.data.map((run: any) => run.trigger.event.body.n)).toEqual([3, 2]);
    expect(firstPage.body.page_info.start_cursor).toBe(firstPage.body.data[0].id);
    expect(firstPage.body.page_info.end_cursor).toBe(firstPage.body.data[1].id);
    const nextPage = await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=2&after=${firstPage.body.page_info.end_cursor}`, { key });
    expect(nextPage.body.page_info).toMatchObject({ total_count: 3, count: 1 });
    expect(nextPage.body.data.map((run: any) => run.trigger.event.body.n)).toEqual([1]);
    const backPage = await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=2&before=${nextPage.body.data[0].id}`, { key });
    expect(backPage.body.data.map((run: any) => run.trigger.event.body.n)).toEqual([3, 2]);

    const newest = firstPage.body.data[0];
    const one = await call(server.url, "GET", `/v1/runs/${newest.id}`, { key });
    expect(one.status).toBe(200);
    const run = one.body.data;
    expect(run).toEqual(newest);
    expect(run.id).toMatch(/^run_/);
    expect(run.workflow_id).toBe(workflow.id);
    expect(run.status).toBe("success");
    expect(run.error).toBeNull();
    expect(run.exit_reason).toBeNull();
    expect(run.replay_of).toBeNull();
    expect(run.trigger.emitter_id).toBe(workflow.trigger.source_id);
    expect(run.trigger.event_id).toBe(eventIds[2]);
    expect(run.trigger.event_id).toMatch(/^\d+-\d+$/);
    expect(run.trigger.event).toMatchObject({ method: "POST", path: "/", body: { n: 3 }, bodyRaw: '{"n":3}' });

    expect(run.steps).toHaveLength(2);
    const [first, second] = run.steps;
    expect(first).toMatchObject({ id: workflow.steps[0].id, name: "first", status: "success", $return_value: { n: 3 }, exports: { doubled: 6 }, summary: "doubled 3" });
    expect(first.logs.map((log: any) => [log.stream, log.text])).toEqual([
      ["stdout", "first saw 3"],
      ["stderr", "a line on stderr"],
    ]);
    expect(second).toMatchObject({ id: workflow.steps[1].id, name: "second", status: "success", $return_value: 9, exports: {}, summary: null });
    expect(second.logs.map((log: any) => log.text)).toEqual(["second got 6"]);

    // Timing: the run spans its steps, which run one after the other.
    expect(run.duration_ms).toBe(run.finished_at_ms - run.started_at_ms);
    expect(run.finished_at_ms).toBeGreaterThanOrEqual(run.started_at_ms);
    expect(first.started_at_ms).toBeGreaterThanOrEqual(run.started_at_ms);
    expect(second.started_at_ms).toBeGreaterThanOrEqual(first.started_at_ms);
    expect(second.started_at_ms).toBeLessThanOrEqual(run.finished_at_ms);
    for (const step of run.steps) {
      expect(step.duration_ms).toBeGreaterThanOrEqual(0);
      for (const log of step.logs) expect(log.ts).toBeGreaterThanOrEqual(run.started_at_ms);
    }
  });

  it("answers 404 for a run or a workflow that is not the caller's", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Private runs",
      trigger: { type: "http" },
      steps: [{ name: "only", code: "export default defineComponent({ run() { return 1; } })" }],
    });
    await post(workflow.trigger.endpoint_url, {});
    const [run] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
    const other = (await createUser(server, "someone-else")).key;
    expect((await call(server.url, "GET", `/v1/runs/${run.id}`, { key: other })).status).toBe(404);
    expect((await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs`, { key: other })).status).toBe(404);
    expect((await call(server.url, "GET", "/v1/runs/run_nothing", { key })).status).toBe(404);
  });
});

describe("code steps in each module form", () => {
  it("runs CommonJS, ES module (defineComponent not imported) and TypeScript steps", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Module forms",
      trigger: { type: "http" },
      steps: [
        { name: "cjs", code: "module.exports = { run({ steps, $ }) { $.export('form', 'cjs'); return steps.trigger.event.body.value + 1; } };" },
        { name: "esm", code: "export default defineComponent({ async run({ steps }) { return steps.cjs.$return_value * 10; } });" },
        {
          name: "typed",
          filename: "step.ts",
          code: `interface Input { esm: { $return_value: number } }
export default defineComponent({
  async run({ steps, $ }: { steps: Input & Record<string, any>; $: any }): Promise<string> {
    const value: number = steps.esm.$return_value;
    const label = <T extends number>(n: T): string => \`value=\${n}\`;
    $.export("typed", true as boolean);
    return label(value);
  },
});`,
        },
      ],
    });
    await post(workflow.trigger.endpoint_url, { value: 4 });
    const [run] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
    expect(run.status).toBe("success");
    expect(run.steps.map((step: any) => [step.name, step.status, step.$return_value, step.exports])).toEqual([
      ["cjs", "success", 5, { form: "cjs" }],
      ["esm", "success", 50, {}],
      ["typed", "success", "value=50", { typed: true }],
    ]);
  });
});

describe("step props with expressions", () => {
  it("evaluates whole-value and embedded expressions against the trigger and earlier steps", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Expressions",
      trigger: { type: "http" },
      steps: [
        { name: "a", code: "export default defineComponent({ run({ $ }) { $.export('someExport', { deep: ['x', 'y'] }); return 42; } })" },
        {
          name: "b",
          code: `export default defineComponent({
            props: {
              x: { type: "any" },
              answer: { type: "any" },
              exported: { type: "any" },
              greeting: { type: "string" },
              missing: { type: "any", optional: true },
              nested: { type: "object" },
            },
            run() {
              return { x: this.x, answer: this.answer, exported: this.exported, greeting: this.greeting, missing: this.missing === undefined ? "undefined" : this.missing, nested: this.nested };
            },
          })`,
          props: {
            x: "{{steps.trigger.event.body.x}}",
            answer: "{{steps.a.$return_value}}",
            exported: "{{ steps.a.someExport }}",
            greeting: "Hello {{steps.trigger.event.body.name}}, the answer is {{steps.a.$return_value}} and {{steps.a.someExport.deep[1]}}!",
            missing: "{{steps.a.nothing.here}}",
            nested: { list: ["{{steps.trigger.event.body.x}}", "plain"], who: "{{steps.trigger.event.body.name}}" },
          },
        },
      ],
    });
    expect(workflow.steps[1].props.greeting).toContain("{{steps.trigger.event.body.name}}");
    await post(workflow.trigger.endpoint_url, { x: { count: 7 }, name: "Ada" });
    const [run] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
    expect(run.status).toBe("success");
    expect(run.steps[1].$return_value).toEqual({
      // A value that is one expression alone keeps its type.
      x: { count: 7 },
      answer: 42,
      exported: { deep: ["x", "y"] },
      greeting: "Hello Ada, the answer is 42 and y!",
      // Reading a path that does not exist is undefined, not an error.
      missing: "undefined",
      nested: { list: [{ count: 7 }, "plain"], who: "Ada" },
    });
  });

  it("refuses at create an expression that cannot be read, naming the prop, and one reading a later step", async () => {
    const step = (name: string, props: Record<string, unknown> = {}) => ({ name, code: "export default defineComponent({ run() { return 1; } })", props });
    const syntax = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: { name: "Bad expression", trigger: { type: "http" }, steps: [step("a"), step("b", { x: "{{steps.}}" })] },
    });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error.code).toBe("ValidationError");
    expect(syntax.body.error.details.field).toBe("steps[1].props.x");
    expect(syntax.body.error.message).toContain("steps[1].props.x");
    const embedded = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: { name: "Bad expression", trigger: { type: "http" }, steps: [step("a"), step("b", { ok: "{{steps.a.$return_value}}", x: "Hello {{steps.a.}}!" })] },
    });
    expect(embedded.status).toBe(400);
    expect(embedded.body.error.details.field).toBe("steps[1].props.x");

    const later = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: { name: "Reads ahead", trigger: { type: "http" }, steps: [step("a", { y: "{{steps.b.$return_value}}" }), step("b")] },
    });
    expect(later.status).toBe(400);
    expect(later.body.error.details.field).toBe("steps[0].props.y");
    expect(later.body.error.message).toContain('"b"');

    const self = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: { name: "Reads itself", trigger: { type: "http" }, steps: [step("a"), step("b", { deep: { list: ["{{steps.b.x}}"] } })] },
    });
    expect(self.status).toBe(400);
    expect(self.body.error.details.field).toBe("steps[1].props.deep.list[0]");

    const code = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: { name: "Code in an expression", trigger: { type: "http" }, steps: [step("a"), step("b", { x: "{{ steps.a.$return_value + 1 }}" })] },
    });
    expect(code.status).toBe(400);
    expect(code.body.error.details.field).toBe("steps[1].props.x");

    // Nothing refused was created.
    const listed = await call(server.url, "GET", "/v1/users/me/workflows?limit=100", { key });
    expect(listed.body.data.some((item: any) => ["Bad expression", "Reads ahead", "Reads itself", "Code in an expression"].includes(item.name))).toBe(false);
  });

  it("refuses on update too, and keeps the workflow as it was", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Kept on bad update",
      trigger: { type: "http" },
      steps: [{ name: "a", code: "export default defineComponent({ run() { return 1; } })" }],
    });
    const refused = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, {
      key,
      json: { steps: [{ name: "a", code: "export default defineComponent({ run() { return 2; } })", props: { v: "{{steps.zzz}}" } }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("steps[0].props.v");
    const after = await call(server.url, "GET", `/v1/workflows/${workflow.id}`, { key });
    expect(after.body.data.deployment_id).toBe(workflow.deployment_id);
    expect(after.body.data.steps).toEqual(workflow.steps);
  });
});
