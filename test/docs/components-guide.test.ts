import { createHash } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureRegistry } from "../../src/bench/fixture-registry.js";
import { bundleFile } from "../../src/cli/component-code.js";
import { loadWorkflowFile } from "../../src/cli/deploy-workflow.js";
import { parseWorkflowFile } from "../../src/cli/workflow-file.js";
import { runCli } from "../helpers/child.js";
import { runSource, startNpmFixture } from "../helpers/npm-registry.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, eventually, logsOf } from "../helpers/sources.js";
import { errorsOf, runsOf, waitFor } from "../workflows/helpers.js";

/**
 * docs/components.md cannot go stale: every example in it is a file under
 * docs/examples/ (the guide's code block and the file are the same text), and
 * every file is deployed here, the way `runnel deploy` sends it, against a real
 * server, checking what the guide says it does.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const GUIDE = join(ROOT, "docs", "components.md");
const EXAMPLES = join(ROOT, "docs", "examples");
const example = (path: string) => join(EXAMPLES, path);

/** The guide's code blocks whose first line names an example file: `// docs/examples/…` or `# docs/examples/…`. */
function namedBlocks(markdown: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const match of markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)) {
    const body = match[2]!;
    const named = /^(?:\/\/|#) (docs\/examples\/\S+)\n/.exec(body);
    if (named) blocks.set(named[1]!, body);
  }
  return blocks;
}

async function filesUnder(folder: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(relative(ROOT, path));
  }
  return out.sort();
}

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe("docs/components.md and its examples", () => {
  let server: TestServer;
  let registry: FixtureRegistry;
  let scratch: string;
  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];
  const key = () => server.adminKey;

  /** What `runnel deploy <file>` sends: the file bundled with its relative imports. */
  async function deployFile(path: string, extra: Record<string, unknown> = {}): Promise<any> {
    const { input } = await bundleFile(example(path));
    return deploySource(server, key(), { ...input, ...extra });
  }
  const newest = async (sourceId: string) => (await eventsOf(server, key(), sourceId))[0];

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "runnel-guide-"));
    registry = await startNpmFixture(join(scratch, "marker"));
    receiver = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        received.push({ path: request.url ?? "", headers: request.headers, body });
        if (request.url?.startsWith("/status")) {
          response.setHeader("content-type", "application/json");
          response.end(JSON.stringify({ state: "all good" }));
        } else response.end("ok");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    server = await startTestServer({ RUNNEL_NPM_REGISTRY: registry.url, RUNNEL_EGRESS_ALLOW: "127.0.0.1", RUNNEL_SEND_RETRY_BASE_MS: "200" });
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
    receiver?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it("shows every example file verbatim, and every code block it names is a file", async () => {
    const blocks = namedBlocks(await readFile(GUIDE, "utf8"));
    const files = await filesUnder(EXAMPLES);
    expect([...blocks.keys()].sort()).toEqual(files);
    for (const [path, body] of blocks) expect(body, `the guide's block of ${path}`).toBe(await readFile(join(ROOT, path), "utf8"));
  });

  it("docs/workflows.md: its workflow file example is one that `runnel deploy` reads", async () => {
    const markdown = await readFile(join(ROOT, "docs", "workflows.md"), "utf8");
    const yaml = [...markdown.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
    expect(yaml.length).toBeGreaterThan(0);
    for (const text of yaml) {
      const file = parseWorkflowFile(text, "orders.yaml");
      expect(file.body).toMatchObject({ name: "Orders", respond: "workflow" });
      expect(file.codeFiles.map((ref) => ref.path)).toEqual(["./steps/fetch.ts"]);
    }
  });

  it("links the guide from the README", async () => {
    expect(await readFile(join(ROOT, "README.md"), "utf8")).toContain("(docs/components.md)");
  });

  it("echo.mjs: deployed with `runnel deploy`, emits each request's body with a summary, shown by `runnel events`", async () => {
    const env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key(), HOME: scratch, XDG_CONFIG_HOME: scratch };
    const deployed = await runCli(["deploy", "docs/examples/sources/echo.mjs", "--json"], { env, cwd: ROOT, timeoutMs: 60_000 });
    expect(deployed.code, deployed.stderr).toBe(0);
    const source = JSON.parse(deployed.stdout);
    const response = await fetch(`${source.endpoint_url}/hello`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"hello":"world"}' });
    expect(response.status).toBe(200);
    const event = await newest(source.id);
    expect(event.event).toEqual({ hello: "world" });
    expect(event.metadata.summary).toBe("POST /hello");
    const events = await runCli(["events", "echo", "-n", "1", "--json"], { env, cwd: ROOT });
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout).toContain('"hello": "world"');
  });

  it("respond.mjs: answers itself, with a status, headers and a JSON body", async () => {
    const source = await deployFile("sources/respond.mjs");
    const ok = await fetch(`${source.endpoint_url}?name=Ada`);
    expect(ok.status).toBe(201);
    expect(ok.headers.get("x-greeter")).toBe("runnel");
    expect(await ok.json()).toEqual({ hello: "Ada" });
    const bad = await fetch(source.endpoint_url);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "add ?name=" });
    const events = await eventsOf(server, key(), source.id);
    expect(events.map((e) => [e.event, e.metadata.summary])).toEqual([[{ name: "Ada" }, "greeted Ada"]]);
  });

  it("timer.mjs: runs every 15 minutes by default, or on the schedule given at deploy", async () => {
    const byDefault = await deployFile("sources/timer.mjs");
    expect(byDefault.configured_props.timer).toEqual({ cron: null, interval_seconds: 900 });
    await call(server.url, "DELETE", `/v1/sources/${byDefault.id}`, { key: key() });
    const source = await deployFile("sources/timer.mjs", { name: "fast heartbeat", configured_props: { timer: { intervalSeconds: 1 } } });
    const event = await eventually(() => newest(source.id), 8_000, "a tick");
    expect(event.event).toEqual({ beat: expect.any(Number) });
    expect(event.metadata.summary).toBe("heartbeat");
    await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: key() });
  });

  it("new-orders.mjs: emits oldest first, and drops the ids it emitted before (dedupe unique)", async () => {
    const source = await deployFile("sources/new-orders.mjs");
    const post = (orders: unknown[]) => fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ orders }) });
    const order = (id: string, minute: number) => ({ id, total: minute * 10, created_at: `2026-11-25T10:${String(minute).padStart(2, "0")}:00Z` });
    expect((await post([order("o-2", 2), order("o-1", 1)])).status).toBe(200);
    expect((await post([order("o-2", 2), order("o-3", 3)])).status).toBe(200);
    const events = (await eventsOf(server, key(), source.id)).reverse();
    expect(events.map((e) => e.event.id)).toEqual(["o-1", "o-2", "o-3"]);
    expect(events[0].metadata.summary).toBe("Order o-1: 10 EUR");
    // The guide's "Errors" section: a body without orders throws; the caller gets 502, the logs the TypeError.
    expect((await post(undefined as unknown as unknown[])).status).toBe(502);
    expect((await logsOf(server, key(), source.id)).join("\n")).toMatch(/TypeError/);
    expect((await post([order("o-4", 4)])).status).toBe(200);
  });

  it("new-tickets.mjs: sorts by number and emits only numbers greater than any before (dedupe greatest)", async () => {
    const source = await deployFile("sources/new-tickets.mjs");
    const post = (numbers: number[]) =>
      fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ tickets: numbers.map((number) => ({ number, title: `t${number}` })) }) });
    expect((await post([3, 1, 2])).status).toBe(200);
    expect((await post([2, 4])).status).toBe(200);
    const events = (await eventsOf(server, key(), source.id)).reverse();
    expect(events.map((e) => e.event.number)).toEqual([1, 2, 3, 4]);
    expect(events[3].metadata.summary).toBe("#4 t4");
  });

  it("counter.mjs: keeps its count in $.service.db; deploy runs once, activate on each deploy and update, deactivate logs", async () => {
    const source = await deployFile("sources/counter.mjs");
    await fetch(source.endpoint_url, { method: "POST" });
    await fetch(source.endpoint_url, { method: "POST" });
    expect((await newest(source.id)).event).toEqual({ count: 2, activations: 1 });
    // An update (here: a new name) runs deactivate, then activate; the store stays.
    const updated = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: key(), json: { name: "Counter renamed" } });
    expect(updated.status).toBe(200);
    await fetch(source.endpoint_url, { method: "POST" });
    expect((await newest(source.id)).event).toEqual({ count: 3, activations: 2 });
    expect((await logsOf(server, key(), source.id)).join("\n")).toContain("deactivated at count 2");
  });

  it("props.mjs: takes every input type, applies defaults, hides the secret, and refuses what does not fit", async () => {
    const configured = { city: "Lisbon", apiKey: "k-123456", days: 7, alerts: true, tags: ["rain", "wind"], limits: [1, 2], extra: { lang: "pt" } };
    const source = await deployFile("sources/props.mjs", { configured_props: configured });
    expect(source.configured_props.apiKey).toBeUndefined();
    const run = await runSource(server, source.id);
    expect(run.events[0].event).toEqual({ city: "Lisbon", units: "metric", days: 7, alerts: true, tags: ["rain", "wind"], limits: [1, 2], extra: { lang: "pt" }, keyLength: 8 });
    const { input } = await bundleFile(example("sources/props.mjs"));
    const tooMany = await call(server.url, "POST", "/v1/sources", { key: key(), json: { ...input, configured_props: { ...configured, days: 20 } } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details.field).toBe("configured_props.days");
    const unknownUnit = await call(server.url, "POST", "/v1/sources", { key: key(), json: { ...input, configured_props: { ...configured, units: "kelvin" } } });
    expect(unknownUnit.status).toBe(400);
    const missing = await call(server.url, "POST", "/v1/sources", { key: key(), json: { ...input, configured_props: { city: "Lisbon" } } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe("configured_props.apiKey");
  });

  it("forecast.mjs: uses an app file's propDefinition and methods, bundled with the component", async () => {
    const source = await deployFile("sources/forecast.mjs", { configured_props: { city: "Porto Alegre" } });
    const run = await runSource(server, source.id);
    expect(run.events[0].event).toEqual({ url: "https://weather.example.com/v1/forecast?city=Porto%20Alegre", auth: {} });
    const saved = await call(server.url, "GET", `/v1/components/${source.component_id}`, { key: key() });
    const city = saved.body.data.configurable_props.find((prop: any) => prop.name === "city");
    expect(city).toMatchObject({ type: "string", label: "Forecast for", description: "A city name, such as Lisbon" });
    const options = await call(server.url, "POST", `/v1/sources/${source.id}/props/city/options`, { key: key(), json: { query: "porto" } });
    expect(options.body.data.options).toEqual(["Porto", "Porto Alegre"]);
  });

  it("padded.mjs: imports a pinned package with no install step", async () => {
    const source = await deployFile("sources/padded.mjs");
    const run = await runSource(server, source.id);
    expect(run.events[0].event).toEqual({ invoice: "000042", version: "1.2.3" });
  });

  it("typed.ts: runs TypeScript with defineComponent and no import", async () => {
    const source = await deployFile("sources/typed.ts");
    await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"sensor":"attic","celsius":100}' });
    await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"sensor":"cellar","celsius":10}' });
    const [alert] = await eventsOf(server, key(), source.id, "&event_name=alerts");
    expect(alert.event).toEqual({ sensor: "attic", fahrenheit: 212 });
    expect(alert.metadata).toMatchObject({ name: "alerts", summary: "attic: 212 °F" });
    const all = await eventsOf(server, key(), source.id);
    expect(all.map((e) => [e.event.sensor, e.metadata.name || "(default)"])).toEqual([["cellar", "(default)"], ["attic", "alerts"]]);
  });

  it("legacy.js: runs a CommonJS module with require", async () => {
    const source = await deployFile("sources/legacy.js");
    await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "text/plain" }, body: "abc" });
    expect((await newest(source.id)).event).toEqual({ sha256: createHash("sha256").update("abc").digest("hex") });
  });

  it("workflows/status.yaml: an http_request prop, configured with expressions, sent by execute()", async () => {
    for (const [name, value] of [["STATUS_URL", `${receiverUrl}/status`], ["STATUS_TOKEN", "st-42"]] as const) {
      expect((await call(server.url, "PUT", `/v1/env/${name}`, { key: key(), json: { value, secret: false } })).status).toBe(200);
    }
    const { body } = await loadWorkflowFile(example("workflows/status.yaml"), "status.yaml");
    const created = await call(server.url, "POST", "/v1/workflows", { key: key(), json: body });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const workflow = created.body.data;
    expect(created.body.data.triggers[0]).toMatchObject({ interval_seconds: 300 });
    // Not five minutes: the timer is run once by hand, as `runnel run` does.
    const ran = await call(server.url, "POST", `/v1/sources/${workflow.trigger.source_id}/run`, { key: key(), json: {} });
    expect(ran.status, JSON.stringify(ran.body)).toBe(200);
    const [run] = await waitFor(() => runsOf(server, key(), workflow.id), (list) => list.length === 1, "the run");
    expect(run.status).toBe("success");
    expect(run.steps[0].$return_value).toEqual({ state: "all good" });
    expect(run.steps[0].summary).toBe("status: all good");
    const request = received.find((r) => r.path.startsWith("/status"))!;
    expect(request.path).toBe("/status?verbose=1");
    expect(request.headers.authorization).toBe("Bearer st-42");
  });

  it("actions/format-money.mjs: published with `runnel publish`, used by key from workflows/invoice.yaml", async () => {
    const env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key(), HOME: scratch, XDG_CONFIG_HOME: scratch };
    const published = await runCli(["publish", "docs/examples/actions/format-money.mjs", "--json"], { env, cwd: ROOT, timeoutMs: 60_000 });
    expect(published.code, published.stderr).toBe(0);
    const { body } = await loadWorkflowFile(example("workflows/invoice.yaml"), "invoice.yaml");
    const created = await call(server.url, "POST", "/v1/workflows", { key: key(), json: body });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const workflow = created.body.data;
    const response = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"amount":12.5}' });
    expect(response.status).toBe(200);
    const text = new Intl.NumberFormat("de-DE", { style: "currency", currency: "EUR" }).format(12.5);
    expect(text.replace(/\s/g, " ")).toBe("12,50 €");
    expect(await response.json()).toEqual({ text });
    const [run] = await waitFor(() => runsOf(server, key(), workflow.id), (list) => list.length === 1, "the run");
    expect(run.steps[0].summary).toBe(`Formatted 12.5 as ${text}`);
  });

  describe("workflows/orders.yaml", () => {
    let workflow: any;
    const post = (body: unknown) => fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const runs = (count: number) => waitFor(() => runsOf(server, key(), workflow.id), (list) => list.length >= count, `${count} runs`);

    beforeAll(async () => {
      for (const [name, value] of [["ORDERS_HOOK_URL", `${receiverUrl}/orders`], ["ORDERS_HOOK_TOKEN", "t0ken"]] as const) {
        const set = await call(server.url, "PUT", `/v1/env/${name}`, { key: key(), json: { value, secret: name.endsWith("TOKEN") } });
        expect(set.status).toBe(200);
      }
      const { body } = await loadWorkflowFile(example("workflows/orders.yaml"), "orders.yaml");
      const created = await call(server.url, "POST", "/v1/workflows", { key: key(), json: body });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      workflow = created.body.data;
    });

    it("answers with the price, records each step's result and exports, keeps state, and sends the notification once with a key", async () => {
      const response = await post({ id: "o-1", customer: "Ada", items: [{ sku: "a", price: 10, quantity: 2 }, { sku: "b", price: 5.5, quantity: 1 }] });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-order")).toBe("o-1");
      expect(await response.json()).toEqual({ total: 22.95, currency: "EUR" });
      const [run] = await runs(1);
      expect(run.status).toBe("success");
      const step = (name: string) => run.steps.find((s: any) => s.name === name || s.namespace === name);
      expect(step("parse").exports).toMatchObject({ customer: "Ada" });
      expect(step("parse").summary).toBe("order o-1, 2 items");
      expect(step("tally").$return_value).toEqual({ count: 1, stored: ["o-1"] });
      const records = await call(server.url, "GET", "/v1/data_stores/orders/records/o-1", { key: key() });
      expect(records.body.data).toMatchObject({ value: { total: 22.95, currency: "EUR" } });
      const sent = await waitFor(async () => received.filter((r) => r.path === "/orders"), (list) => list.length === 1, "the notification");
      expect(JSON.parse(sent[0]!.body)).toEqual({ text: "Order o-1 for Ada: 22.95" });
      expect(sent[0]!.headers.authorization).toBe("Bearer t0ken");
      expect(sent[0]!.headers["idempotency-key"]).toBe(`${run.id}:3:0`);
    });

    it("refuses at save a step prop that does not fit, naming the field the guide names", async () => {
      const { body } = await loadWorkflowFile(example("workflows/orders.yaml"), "orders.yaml");
      const steps = (body.steps as any[]).map((step) => (step.name === "price" ? { ...step, props: { ...step.props, discount: 60 } } : step));
      const refused = await call(server.url, "POST", "/v1/workflows", { key: key(), json: { ...body, name: "Orders too generous", steps } });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.field).toBe("steps[1].props.discount");
    });

    it("counts in the step's own store across runs", async () => {
      await post({ id: "o-2", customer: "Bo", items: [{ sku: "a", price: 1, quantity: 1 }] });
      const list = await runs(2);
      const tally = list[0].steps.find((s: any) => (s.name ?? s.namespace) === "tally");
      expect(tally.$return_value).toEqual({ count: 2, stored: ["o-1", "o-2"] });
    });

    it("ends early with $.flow.exit after answering, and skips the later steps", async () => {
      const response = await post({ id: "o-3", customer: "Cy", items: [] });
      expect(await response.json()).toEqual({ skipped: "no items" });
      const list = await runs(3);
      expect(list[0].status).toBe("exited");
      expect(list[0].exit_reason).toBe("empty order");
      expect(list[0].steps.slice(1).map((s: any) => s.status)).toEqual(["skipped", "skipped", "skipped", "skipped"]);
    });

    it("lists a thrown error in $errors, naming the step, and answers the caller 502", async () => {
      const response = await post({ customer: "Dee", items: [] });
      expect(response.status).toBe(502);
      const errors = await waitFor(() => errorsOf(server, key(), workflow.id), (listed) => listed.data.length === 1, "the error");
      const error = errors.data[0].event.error;
      expect(error.code).toBe("UserError");
      expect(error.msg).toBe("An order needs an id");
      expect(error.cellId).toBe(workflow.steps[0].id);
      expect(errors.data[0].event.original_event.body).toEqual({ customer: "Dee", items: [] });
    });
  });
});
