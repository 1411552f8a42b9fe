import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOG_ROOT } from "../../src/catalog/bundle-catalog.js";
import { catalogCode } from "../helpers/catalog.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, waitFor } from "../workflows/helpers.js";

/**
 * The first helper actions (delay, end workflow, filter, format date, parse
 * JSON) as workflow steps on a real server. Each workflow takes its props from
 * the trigger event, so one workflow runs many cases (`POST …/runs?wait=true`).
 */

let server: TestServer;
let key: string;
const code: Record<string, string> = {};
beforeAll(async () => {
  server = await startTestServer();
  key = server.adminKey;
  for (const slug of ["delay", "end-workflow", "filter", "format-date", "parse-json"]) code[slug] = await catalogCode(`helper_functions/actions/${slug}/${slug}.mjs`);
});
afterAll(() => server.close());

const AFTER = { name: "after", code: "export default defineComponent({ async run() { return 'continued'; } })" };
const fromEvent = (...names: string[]) => Object.fromEntries(names.map((name) => [name, `{{steps.trigger.event.${name}}}`]));

async function workflowOf(name: string, slug: string, props: Record<string, unknown>, withAfter = true): Promise<string> {
  const workflow = await createWorkflow(server, key, { name, steps: [{ name: slug.replace(/-/g, "_"), code: code[slug], props }, ...(withAfter ? [AFTER] : [])] });
  return workflow.id;
}
async function runOn(workflowId: string, event: unknown): Promise<any> {
  const run = await call(server.url, "POST", `/v1/workflows/${workflowId}/runs?wait=true`, { key, json: { event } });
  if (run.status !== 200) throw new Error(`the run did not finish: ${run.status} ${JSON.stringify(run.body)}`);
  return run.body.data;
}
async function saveRefused(slug: string, props: Record<string, unknown>): Promise<any> {
  const refused = await call(server.url, "POST", "/v1/workflows", { key, json: { name: `refused ${slug}`, steps: [{ name: slug.replace(/-/g, "_"), code: code[slug], props }] } });
  expect(refused.status).toBe(400);
  return refused.body.error;
}

describe("helper_functions-delay", () => {
  /** The run once it has ended (a delayed run is recorded, and read back, before it resumes). */
  async function endedRun(workflowId: string, event: unknown): Promise<any> {
    const queued = await call(server.url, "POST", `/v1/workflows/${workflowId}/runs`, { key, json: { event } });
    return waitFor(() => call(server.url, "GET", `/v1/runs/${queued.body.data.run_id}`, { key }), (answer) => answer.status === 200 && answer.body.data.status !== "delayed", "the run to end").then((answer) => answer.body.data);
  }

  it("pauses the run ($.flow.delay) and goes on with the next step after the delay", async () => {
    const id = await workflowOf("Delay", "delay", { duration: 300, unit: "milliseconds" });
    const run = await endedRun(id, {});
    expect(run.status).toBe("success");
    expect(run.steps[0].$return_value).toMatchObject({ delay_ms: 300, resume_url: expect.stringContaining("/resume"), cancel_url: expect.stringContaining("/cancel") });
    expect(run.steps[0].summary).toBe("Waiting 300 milliseconds");
    expect(run.steps[1].started_at_ms - run.steps[0].started_at_ms).toBeGreaterThanOrEqual(295);
    expect(run.steps[1].$return_value).toBe("continued");
  });

  it("refuses a wait longer than 7 days when saved, and when an expression gives one, in the run, saying so", async () => {
    const refused = await saveRefused("delay", { duration: 8, unit: "days" });
    expect(refused.details.field).toBe("steps[0].props.duration");
    expect(refused.message).toBe('Step "delay": a delay of 8 days is longer than the 7 days a run may wait. Give 7 days or less (7 days).');
    expect((await saveRefused("delay", { duration: 604_801 })).message).toContain("Give 7 days or less (604800 seconds)");
    // Exactly 7 days is allowed.
    await workflowOf("Week delay", "delay", { duration: 168, unit: "hours" });
    const id = await workflowOf("Long delay", "delay", { duration: "{{steps.trigger.event.days}}", unit: "days" });
    const run = await endedRun(id, { days: 8 });
    expect(run.status).toBe("error");
    expect(run.error.msg).toBe("A delay of 8 days is longer than the 7 days a run may wait. Wait 7 days or less.");
  });

  it("refuses a negative duration or an unknown unit when saved", async () => {
    expect((await saveRefused("delay", { duration: -1 })).details.field).toBe("steps[0].props.duration");
    expect((await saveRefused("delay", { duration: 1, unit: "weeks" })).details.field).toBe("steps[0].props.unit");
    expect((await saveRefused("delay", {})).details.field).toBe("steps[0].props.duration");
  });
});

describe("helper_functions-end-workflow", () => {
  it("ends the run as exited with the reason, skipping later steps", async () => {
    const id = await workflowOf("End", "end-workflow", { reason: "Nothing to do for {{steps.trigger.event.who}}" });
    const run = await runOn(id, { who: "ada" });
    expect(run.status).toBe("exited");
    expect(run.exit_reason).toBe("Nothing to do for ada");
    expect(run.steps.map((step: any) => step.status)).toEqual(["exited", "skipped"]);
    const plain = await runOn(await workflowOf("End plain", "end-workflow", {}), {});
    expect(plain.exit_reason).toBe("Ended by the End workflow step");
  });
});

describe("helper_functions-filter", () => {
  let filter: string;
  beforeAll(async () => {
    filter = await workflowOf("Filter", "filter", fromEvent("value", "operator", "compareTo"));
  });

  it.each([
    ["numeric text against a number", { value: 10, operator: "greater_than", compareTo: "9" }],
    ["text containing text", { value: "abc", operator: "contains", compareTo: "b" }],
    ["a list containing an item", { value: ["a", "b"], operator: "contains", compareTo: "b" }],
    ["dates in order", { value: "2026-01-02", operator: "greater_than", compareTo: "2026-01-01T12:00:00Z" }],
    ["a regular expression", { value: "order-12", operator: "matches", compareTo: "^order-\\d+$" }],
    ["empty text", { value: "", operator: "is_empty" }],
    ["a value that exists", { value: 0, operator: "exists" }],
    ["true as text", { value: "true", operator: "is_true" }],
    ["deep equality", { value: { a: [1] }, operator: "equals", compareTo: { a: [1] } }],
  ])("continues when the condition holds: %s", async (_label, event) => {
    const run = await runOn(filter, event);
    expect(run.status).toBe("success");
    expect(run.steps[0].$return_value.passed).toBe(true);
    expect(run.steps[1].$return_value).toBe("continued");
  });

  it.each([
    [{ value: 5, operator: "less_than", compareTo: 3 }, "Filter: it is not true that 5 is less than 3, so the run ended here."],
    [{ value: "Hello", operator: "equals", compareTo: "hello" }, 'Filter: it is not true that "Hello" is equal to "hello", so the run ended here.'],
    [{ operator: "exists" }, "Filter: it is not true that nothing exists, so the run ended here."],
  ])("ends the run when it does not: %j", async (event, reason) => {
    const run = await runOn(filter, event);
    expect(run.status).toBe("exited");
    expect(run.exit_reason).toBe(reason);
    expect(run.steps[1].status).toBe("skipped");
  });

  it.each([
    [{ value: 1, operator: "greater_than" }, 'Prop "compareTo" is required with the condition "is greater than": give the value to compare with.'],
    [{ value: "x", operator: "matches", compareTo: "(" }, 'Prop "compareTo": "(" is not a regular expression'],
    [{ value: { a: 1 }, operator: "greater_than", compareTo: 3 }, "Cannot order an object and a number"],
    [{ value: true, operator: "contains", compareTo: "t" }, '"contains" looks in text or a list; the prop "value" is a boolean.'],
  ])("fails the step with a clear error on a comparison that cannot be made: %j", async (event, message) => {
    const run = await runOn(filter, event);
    expect(run.status).toBe("error");
    expect(run.error.msg).toContain(message);
  });

  it("refuses an operator from the event that is not one of the options", async () => {
    const run = await runOn(filter, { value: 1, operator: "approx", compareTo: 1 });
    expect(run.status).toBe("error");
    expect(run.error.code).toBe("ConfigurationError");
  });

  it("ignores case when told to, uses a custom reason, and refuses an unknown operator when saved", async () => {
    const id = await workflowOf("Filter loose", "filter", { value: "{{steps.trigger.event.value}}", operator: "equals", compareTo: "hello", caseSensitive: false, reason: "not a greeting" });
    expect((await runOn(id, { value: "HELLO" })).status).toBe("success");
    const other = await runOn(id, { value: "bye" });
    expect(other.exit_reason).toBe("not a greeting");
    expect((await saveRefused("filter", { value: 1, operator: "approx" })).details.field).toBe("steps[0].props.operator");
  });
});

describe("helper_functions-format-date", () => {
  let format: string;
  beforeAll(async () => {
    format = await workflowOf("Format date", "format-date", fromEvent("input", "format", "pattern", "timeZone", "locale"), false);
  });
  const formatted = async (event: Record<string, unknown>) => {
    const run = await runOn(format, event);
    if (run.status !== "success") throw new Error(`${run.status}: ${run.error?.msg}`);
    return run.steps[0].$return_value;
  };

  it("formats epoch seconds, epoch milliseconds and ISO text in the presets", async () => {
    expect(await formatted({ input: 1795770000, format: "iso" })).toBe(new Date(1795770000 * 1000).toISOString());
    expect(await formatted({ input: "1795770000123", format: "epoch_seconds" })).toBe(1795770000);
    expect(await formatted({ input: "2026-07-01T12:00:00Z", format: "epoch_ms" })).toBe(Date.UTC(2026, 6, 1, 12));
    expect(await formatted({ input: "2026-07-01T12:00:00Z", timeZone: "Europe/Lisbon" })).toBe("2026-07-01T13:00:00+01:00");
    expect(await formatted({ input: "2026-01-01T12:00:00Z", format: "iso_zoned", timeZone: "Europe/Lisbon" })).toBe("2026-01-01T12:00:00+00:00");
    expect(await formatted({ input: "2026-07-01T20:00:00Z", format: "date", timeZone: "Asia/Tokyo" })).toBe("2026-07-02");
    expect(await formatted({ input: "2026-07-01T20:00:00Z", format: "datetime", timeZone: "Asia/Kolkata" })).toBe("2026-07-02 01:30:00");
    expect(await formatted({ input: "2026-07-01T12:00:00Z", format: "http" })).toBe("Wed, 01 Jul 2026 12:00:00 GMT");
    expect(await formatted({ input: "2026-07-01T12:00:00Z", format: "long", timeZone: "Europe/London", locale: "en-GB" })).toMatch(/^Wednesday,? 1 July 2026 at 13:00:00 (BST|GMT\+1)$/);
    expect(await formatted({ input: "2026-07-01T12:00:00Z", format: "short", timeZone: "Europe/London", locale: "en-GB" })).toBe("01/07/2026, 13:00");
    const now = Date.parse(await formatted({ format: "iso" }));
    expect(Math.abs(now - Date.now())).toBeLessThan(10_000);
  });

  it("fills a custom pattern with names in the language and the zone's offset", async () => {
    const input = "2026-07-01T12:05:09.042Z";
    expect(await formatted({ input, format: "custom", pattern: "dddd DD MMMM YYYY [at] hh:mm:ss.SSS A Z", timeZone: "America/New_York" })).toBe("Wednesday 01 July 2026 at 08:05:09.042 AM -04:00");
    expect(await formatted({ input, format: "custom", pattern: "D. MMMM YY, H:mm ZZ", timeZone: "Europe/Berlin", locale: "de-DE" })).toBe("1. Juli 26, 14:05 +0200");
  });

  it.each([
    [{ input: "yesterday-ish" }, 'Prop "input": "yesterday-ish" is not a date. Give ISO 8601 text'],
    [{ input: "2026-07-01", timeZone: "Moon/Base" }, 'Prop "timeZone": "Moon/Base" is not a time zone this server knows.'],
    [{ input: "2026-07-01", format: "custom" }, 'Prop "pattern" is required when "format" is "custom"'],
    [{ input: "2026-07-01", locale: "not a locale!" }, 'Prop "locale": "not a locale!" is not a language tag.'],
  ])("fails with a clear error naming the prop: %j", async (event, message) => {
    const run = await runOn(format, event);
    expect(run.status).toBe("error");
    expect(run.error.msg).toContain(message);
  });
});

describe("helper_functions-parse-json", () => {
  let parse: string;
  beforeAll(async () => {
    parse = await workflowOf("Parse JSON", "parse-json", { input: "{{steps.trigger.event.text}}" }, false);
  });

  it("parses JSON text, and passes an already parsed value through", async () => {
    const run = await runOn(parse, { text: '{"a": [1, 2], "b": null}' });
    expect(run.status).toBe("success");
    expect(run.steps[0].$return_value).toEqual({ a: [1, 2], b: null });
    expect(run.steps[0].summary).toBe("Parsed an object");
    const object = await runOn(parse, { text: { already: true } });
    expect(object.steps[0].$return_value).toEqual({ already: true });
  });

  it.each([
    ['{"a":1,}', `"}" where a property name in double quotes was expected, at line 1, column 8 (position 7).`],
    ['{\n  "a": 1\n  "b": 2\n}', `'"' where "," or "}" was expected, at line 3, column 3 (position 13).`],
    ["", "the text ends where a value was expected, at line 1, column 1 (position 0)."],
    ["{'a': 1}", "a single quote (JSON strings take double quotes) where a property name in double quotes was expected, at line 1, column 2 (position 1)."],
    ["[1, 2] 3", '"3" after the end of the JSON value, at line 1, column 8 (position 7).'],
  ])("names where %j goes wrong", async (text, where) => {
    const run = await runOn(parse, { text });
    expect(run.status).toBe("error");
    expect(run.error.msg).toContain(`Prop "input" is not valid JSON: ${where}`);
  });
});

describe("the shape of this room's catalog components", () => {
  const apps = ["http", "schedule", "rss", "helper_functions"];
  const mine = new Set(["delay", "end-workflow", "filter", "format-date", "parse-json"]);

  it("has for each a key <app>-<slug>, a semver, a name, a description and a label and description on every prop", async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const app of apps) {
      for (const kind of ["sources", "actions"]) {
        const slugs = await readdir(join(CATALOG_ROOT, app, kind)).catch(() => [] as string[]);
        for (const slug of slugs.filter((name) => app !== "helper_functions" || mine.has(name))) {
          const path = join(CATALOG_ROOT, app, kind, slug, `${slug}.mjs`);
          const component = (await import(path)).default;
          checked++;
          const where = `${app}/${kind}/${slug}`;
          if (component.key !== `${app}-${slug}`) problems.push(`${where}: key ${component.key}`);
          if (component.type !== kind.slice(0, -1)) problems.push(`${where}: type ${component.type}`);
          if (!/^\d+\.\d+\.\d+$/.test(component.version)) problems.push(`${where}: version ${component.version}`);
          for (const field of ["name", "description"]) if (typeof component[field] !== "string" || component[field] === "") problems.push(`${where}: no ${field}`);
          for (const [name, prop] of Object.entries<any>(component.props ?? {})) {
            if (typeof prop !== "object" || !prop.label || !prop.description) problems.push(`${where}: prop ${name} lacks a label or a description`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBe(15);
  });
});
