import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, eventually, logsOf } from "../helpers/sources.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";
import { bundleRegistryComponents } from "./registry-components.js";

/**
 * Issue 14: components as the public registry writes them deploy and run
 * unchanged. One test per rule of API-COMPAT that they need.
 */

interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local API for the components to call: `/echo` answers JSON of what it got, `/moved` redirects there, `/to-metadata` to the cloud metadata address. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://localhost");
      const entry = { method: request.method ?? "", path: url.pathname, query: Object.fromEntries(url.searchParams), headers: request.headers, body };
      received.push(entry);
      if (url.pathname === "/moved") {
        response.writeHead(302, { location: "/echo?from=moved" }).end();
      } else if (url.pathname === "/to-metadata") {
        response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
      } else {
        response.writeHead(url.pathname === "/missing" ? 404 : 200, { "content-type": "application/json", "x-receiver": "yes" }).end(JSON.stringify({ echo: entry }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

let server: TestServer;
let key: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let components: Awaited<ReturnType<typeof bundleRegistryComponents>>;

beforeAll(async () => {
  // The receiver is on loopback, which the network policy refuses unless allowed; the metadata address stays refused.
  // One attempt per send: a failing send is given up (and shows failed) at once.
  server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1", RUNNEL_SEND_MAX_ATTEMPTS: "1" });
  ({ key } = await createUser(server, "registry-user"));
  receiver = await startReceiver();
  components = await bundleRegistryComponents();
});
afterAll(async () => {
  await receiver?.close();
  await server?.close();
  await components?.cleanUp();
});

async function publish(path: string): Promise<any> {
  const published = await call(server.url, "POST", "/v1/components/registry", { key, json: await components.bundle(path) });
  if (published.status !== 201 && published.status !== 200) throw new Error(`publishing ${path} failed: ${published.status} ${JSON.stringify(published.body)}`);
  return published.body.data;
}

async function onlyRun(workflowId: string): Promise<any> {
  const [run] = await waitFor(() => runsOf(server, key, workflowId), (runs) => runs.length === 1, "the run");
  return run;
}

describe("a default on a required prop", () => {
  it("is accepted at publish, shown in configurable_props, and stands in when no value is configured", async () => {
    const published = await publish("helper_functions/actions/random-integer/random-integer.mjs");
    expect(published).toMatchObject({ key: "helper_functions-pick-random-integer", version: "0.0.3", kind: "action" });
    const props = published.component.configurable_props;
    expect(props.find((prop: any) => prop.name === "min")).toEqual({ name: "min", type: "integer", label: "Min", default: 7 });
    expect(props.find((prop: any) => prop.name === "min").optional).toBeUndefined();

    const workflow = await createWorkflow(server, key, {
      name: "Random",
      trigger: { type: "http" },
      steps: [
        { name: "defaulted", key: "helper_functions-pick-random-integer" },
        { name: "given", key: "helper_functions-pick-random-integer", props: { min: 3, max: 3 } },
      ],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST" });
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("success");
    expect(run.steps.map((step: any) => [step.$return_value, step.summary])).toEqual([
      [7, "Generated 7"],
      [3, "Generated 3"],
    ]);
  });

  it("is still checked against the prop's type", async () => {
    const code = `export default { name: "Bad default", version: "0.0.1", type: "action", props: { n: { type: "integer", default: "seven" } }, async run() {} };`;
    const saved = await call(server.url, "POST", "/v1/components", { key, json: { component_code: code, filename: "bad.mjs" } });
    expect(saved.status).toBe(400);
    expect(saved.body.error.details.field).toBe("props.n.default");
  });
});

describe("registry keys with underscores inside their words", () => {
  it("publish under app slugs such as helper_functions, resolve by key, and still refuse a stray underscore", async () => {
    const published = await publish("helper_functions/actions/send-http-request/send-http-request.mjs");
    expect(published.key).toBe("helper_functions-send-http-request");
    const got = await call(server.url, "GET", "/v1/components/registry/helper_functions-send-http-request", { key });
    expect(got).toMatchObject({ status: 200, body: { data: { key: "helper_functions-send-http-request", version: "1.0.1" } } });
    const searched = await call(server.url, "GET", "/v1/components/search?query=send%20http&app=helper_functions", { key });
    expect(searched.body.actions).toContain("helper_functions-send-http-request");

    const stray = (await components.bundle("helper_functions/actions/random-integer/random-integer.mjs")).component_code.replace("helper_functions-pick-random-integer", "helper_functions-_random");
    const refused = await call(server.url, "POST", "/v1/components/registry", { key, json: { component_code: stray, filename: "stray.mjs" } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("key");
  });
});

describe("an http_request prop", () => {
  it("is an object whose execute() sends the configured request and returns { status, headers, data }", async () => {
    await publish("helper_functions/actions/send-http-request/send-http-request.mjs");
    await publish("helper_functions/actions/custom-request/custom-request.mjs");
    const before = receiver.received.length;
    const workflow = await createWorkflow(server, key, {
      name: "Webhook",
      trigger: { type: "http" },
      steps: [
        {
          name: "send",
          key: "helper_functions-send-http-request",
          props: {
            httpRequest: {
              method: "PUT",
              url: `${receiver.url}/echo`,
              // The request editor's rows, and an expression evaluated from the trigger.
              headers: [{ name: "X-Trace", value: "{{steps.trigger.event.body.trace}}" }, { name: "", value: "skipped" }],
              params: { page: 2, q: "a b" },
              auth: { type: "basic", username: "ada", password: "s3cret" },
              body: { type: "fields", fields: [{ name: "greeting", value: "hello" }] },
            },
          },
        },
        // Defined through the app's propDefinition; no method: GET. A redirect is followed.
        { name: "get", key: "helper_functions-custom-request", props: { httpRequest: { url: `${receiver.url}/moved` } } },
        { name: "missing", key: "helper_functions-custom-request", props: { httpRequest: { url: `${receiver.url}/missing`, auth: { type: "bearer", token: "tok" } } } },
      ],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ trace: "t-1" }) });
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("success");

    const sent = run.steps[0].$return_value;
    expect(sent.status).toBe(200);
    expect(sent.headers["x-receiver"]).toBe("yes");
    expect(sent.data.echo).toMatchObject({ method: "PUT", path: "/echo", query: { page: "2", q: "a b" }, body: '{"greeting":"hello"}' });
    expect(sent.data.echo.headers).toMatchObject({ "x-trace": "t-1", authorization: `Basic ${Buffer.from("ada:s3cret").toString("base64")}`, "content-type": "application/json" });
    expect(run.steps[0].summary).toBe("Sent the request: 200");

    expect(run.steps[1].$return_value).toMatchObject({ ok: true, status: 200, data: { echo: { method: "GET", path: "/echo", query: { from: "moved" } } } });
    // A status outside 2xx is returned, not thrown: the component decides.
    expect(run.steps[2].$return_value).toMatchObject({ ok: true, status: 404, data: { echo: { headers: { authorization: "Bearer tok" } } } });
    expect(receiver.received.slice(before).map((request) => `${request.method} ${request.path}`)).toEqual(["PUT /echo", "GET /moved", "GET /echo", "GET /missing"]);
  });

  it("goes through the sandbox's network policy: the cloud metadata address is refused, directly or by a redirect", async () => {
    await publish("helper_functions/actions/custom-request/custom-request.mjs");
    const workflow = await createWorkflow(server, key, {
      name: "Metadata",
      trigger: { type: "http" },
      steps: [
        { name: "direct", key: "helper_functions-custom-request", props: { httpRequest: { url: "http://169.254.169.254/latest/meta-data/" } } },
        { name: "redirected", key: "helper_functions-custom-request", props: { httpRequest: { url: `${receiver.url}/to-metadata` } } },
        { name: "unset", key: "helper_functions-custom-request", props: { httpRequest: { method: "GET" } } },
      ],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST" });
    const run = await onlyRun(workflow.id);
    for (const step of run.steps.slice(0, 2)) {
      expect(step.$return_value).toMatchObject({ ok: false, code: "EACCES" });
      expect(step.$return_value.message).toMatch(/network policy/);
    }
    expect(run.steps[2].$return_value).toMatchObject({ ok: false });
    expect(run.steps[2].$return_value.message).toMatch(/this\.httpRequest\.url is required/);
  });
});

describe("a respond() that can no longer answer", () => {
  it("is ignored with a line in the logs when an earlier call answered: the caller gets the first answer and the run goes on", async () => {
    await publish("webhooks/sources/new-request/new-request.mjs");
    const source = await deploySource(server, key, { key: "webhooks-new-request", name: "new-request" });
    const bad = await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "name is required" });
    const good = await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "ada" }) });
    expect(good.status).toBe(200);
    expect(await good.json()).toEqual({ received: true });

    const events = await eventually(async () => {
      const found = await eventsOf(server, key, source.id);
      return found.length === 2 ? found : undefined;
    }, 10_000, "both events");
    expect(events.map((event) => event.event)).toEqual([{ name: "ada" }, {}]);
    const logs = await logsOf(server, key, source.id);
    expect(logs.filter((line) => /respond\(\) was ignored: an earlier call already answered/.test(line))).toHaveLength(1);
    expect(logs.join("\n")).not.toMatch(/Error/);
  });

  it("is ignored with a line in the logs when customResponse is false: the platform answers", async () => {
    await publish("webhooks/sources/plain-request/plain-request.mjs");
    const source = await deploySource(server, key, { key: "webhooks-plain-request", name: "plain-request" });
    const response = await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 1 }) });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true });
    const [event] = await eventsOf(server, key, source.id);
    expect(event.event).toEqual({ got: { n: 1 } });
    const logs = await eventually(async () => {
      const lines = await logsOf(server, key, source.id);
      return lines.some((line) => line.includes("respond() was ignored")) ? lines : undefined;
    }, 10_000, "the log line");
    expect(logs.find((line) => line.includes("respond() was ignored"))).toMatch(/does not set customResponse: true/);
  });

  it("is ignored in a workflow step too: a second $.respond() leaves the first answer and the run succeeds", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Twice",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [
        { name: "first", code: `export default defineComponent({ async run({ $ }) { await $.respond({ status: 202, body: "first" }); } })` },
        { name: "second", code: `export default defineComponent({ async run({ $ }) { await $.respond({ status: 500, body: "second" }); return "went on"; } })` },
      ],
    });
    const response = await fetch(workflow.trigger.endpoint_url, { method: "POST" });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("first");
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("success");
    expect(run.steps[1].$return_value).toBe("went on");
    expect(run.steps[1].logs.map((log: any) => log.text).join("\n")).toMatch(/\$\.respond\(\) was ignored: an earlier call already answered/);
  });

  it("is ignored in a workflow step when the workflow's respond is \"immediately\": the platform answered", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Immediately",
      trigger: { type: "http" },
      steps: [{ name: "reply", code: `export default defineComponent({ async run({ $ }) { await $.respond({ status: 418, body: "late" }); return "went on"; } })` }],
    });
    const response = await fetch(workflow.trigger.endpoint_url, { method: "POST" });
    expect(response.status).toBe(200);
    const run = await onlyRun(workflow.id);
    expect(run).toMatchObject({ status: "success", steps: [{ $return_value: "went on" }] });
    expect(run.steps[0].logs.map((log: any) => log.text).join("\n")).toMatch(/\$\.respond\(\) was ignored: this workflow does not answer HTTP callers itself/);
  });
});

describe("a step's $.send.* calls in its run record", () => {
  it("shows each send's destination, target, payload summary and delivery status, through the API and the CLI", async () => {
    await publish("webhooks/actions/fan-out/fan-out.mjs");
    const workflow = await createWorkflow(server, key, {
      name: "Fan out",
      trigger: { type: "http" },
      steps: [{ name: "fan_out", key: "webhooks-fan-out", props: { url: receiver.url } }],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: "o-1" }) });
    // The http sends are carried out after the run is recorded: their status follows.
    const [run] = await waitFor(
      () => runsOf(server, key, workflow.id),
      (runs) => runs.length === 1 && runs[0].steps[0].sends.every((send: any) => send.status !== "pending"),
      "the sends to be carried out",
    );
    expect(run.status).toBe("success");
    expect(run.steps[0].sends).toEqual([
      {
        destination: "http",
        target: `POST ${receiver.url}/hook`,
        summary: 'data {"order":"o-1"}; headers x-api-key; query token; basic auth',
        status: "delivered",
        detail: `POST ${receiver.url}/hook answered 200`,
      },
      { destination: "http", target: `GET ${receiver.url}/missing`, summary: "no body", status: "failed", detail: `GET ${receiver.url}/missing answered 404 (given up after 1 attempt)` },
      { destination: "emit", target: `${workflow.id} (default channel)`, summary: 'raw_event {"order":"o-1"}', status: "delivered", detail: null },
      { destination: "sse", target: `${workflow.id} SSE channel "orders"`, summary: 'payload {"order":"o-1"}', status: "delivered", detail: null },
    ]);
    // Secrets of the request are not in the record.
    expect(JSON.stringify(run)).not.toMatch(/hush/);
    expect(await call(server.url, "GET", `/v1/runs/${run.id}`, { key })).toMatchObject({ status: 200, body: { data: { steps: [{ sends: run.steps[0].sends }] } } });

    const home = await mkdtemp(join(tmpdir(), "runnel-sends-cli-"));
    try {
      const shown = await runCli(["runs", run.id], { env: { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: home, XDG_CONFIG_HOME: home } });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`send:    $.send.http → POST ${receiver.url}/hook  delivered (POST ${receiver.url}/hook answered 200)`);
      expect(shown.stdout).toContain(`send:    $.send.http → GET ${receiver.url}/missing  failed (GET ${receiver.url}/missing answered 404 (given up after 1 attempt))`);
      expect(shown.stdout).toContain('raw_event {"order":"o-1"}');
      expect(shown.stdout).not.toContain("hush");
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("records a failed run's sends as not sent, and carries none of them out", async () => {
    await publish("webhooks/actions/fan-out/fan-out.mjs");
    const before = receiver.received.length;
    const workflow = await createWorkflow(server, key, {
      name: "Fan out and fail",
      trigger: { type: "http" },
      steps: [{ name: "fan_out", key: "webhooks-fan-out", props: { url: receiver.url, fail: true } }],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: "o-2" }) });
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("error");
    expect(run.steps[0].sends.map((send: any) => [send.destination, send.status])).toEqual([
      ["http", "not_sent"],
      ["http", "not_sent"],
      ["emit", "not_sent"],
      ["sse", "not_sent"],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.slice(before)).toEqual([]);
  });
});
