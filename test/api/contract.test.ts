import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventually } from "../helpers/sources.js";
import { openStream } from "../helpers/sse.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

/**
 * The contract with clients of the hosted API: every documented endpoint
 * (docs/API-COMPAT and the hosted service's REST reference) that the server
 * implements, called exactly as the documentation shows it (method, path,
 * query, `Authorization: Bearer`, `Content-Type: application/json` with a
 * JSON body), and the documented fields of its answer. One row per
 * endpoint: adding an endpoint is adding a row. `{name}` in a path, query or
 * body string is a fixture value (see `fixture` below).
 */
interface ContractRow {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Record<string, string>;
  /** Sent as JSON with Content-Type: application/json. */
  body?: unknown;
  /** `Content-Type: application/json` with no body, as the seed's subscription request is sent. */
  emptyJsonBody?: true;
  status: number;
  /** Documented fields that must be present; `[]` means every item of a (non-empty) list. */
  fields?: string[];
  /** Documented values: field path → expected value (`{name}` filled) or a RegExp. */
  values?: Record<string, unknown>;
  /** An SSE stream: answered 200 as text/event-stream. */
  stream?: true;
}

const EMITTER = `module.exports = {
  name: "Contract emitter", version: "0.1.0",
  props: { http: { type: "$.interface.http" } },
  async run(event) { console.log("received " + event.path); this.$emit(event.body, { id: event.body.id, summary: "order " + event.body.id }); },
};`;

const PUBLISHED = `export default { key: "contract-notify", name: "Contract notify", version: "1.2.0", type: "action", async run() { return "sent"; } };`;

const EMITS = `export default defineComponent({ async run({ steps, $ }) { $.send.emit({ raw_event: { name: "Luke", title: "Jedi" } }); } })`;
const FAILS = `export default defineComponent({ async run({ steps }) { throw new Error("contract failure"); } })`;

const COMPONENT_FIELDS = ["id", "code", "code_hash", "name", "version", "configurable_props", "created_at", "updated_at"].map((field) => `data.${field}`);
const SOURCE_FIELDS = ["id", "user_id", "component_id", "configured_props", "active", "created_at", "updated_at", "name", "name_slug"];
const PAGE_FIELDS = ["page_info.total_count", "page_info.count", "page_info.start_cursor", "page_info.end_cursor"];
const SUBSCRIPTION_FIELDS = ["id", "emitter_id", "listener_id", "event_name"];
/** The hosted reference's webhook object (create answers it; Runnel adds signing_secret there only). */
const WEBHOOK_FIELDS = ["id", "user_id", "name", "description", "url", "active", "created_at", "updated_at"];

const CONTRACT: Record<string, ContractRow> = {
  // Components
  "Create a component": { method: "POST", path: "/v1/components", body: { component_code: EMITTER }, status: 200, fields: COMPONENT_FIELDS, values: { "data.id": /^sc_/ } },
  "Get a component": { method: "GET", path: "/v1/components/{component_id}", status: 200, fields: COMPONENT_FIELDS, values: { "data.id": "{component_id}" } },
  "Get a component from the registry": {
    method: "GET",
    path: "/v1/components/registry/contract-notify",
    status: 200,
    fields: ["data.key", "data.version", "data.component.id", "data.component.configurable_props"],
    values: { "data.version": "1.2.0" },
  },
  "Search for registry components": { method: "GET", path: "/v1/components/search", query: { query: "contract notify" }, status: 200, fields: ["sources", "actions"], values: { actions: ["contract-notify"] } },

  // Sources
  "Create a source": {
    method: "POST",
    path: "/v1/sources",
    body: { component_id: "{component_id}", name: "contract-created", configured_props: {} },
    status: 200,
    fields: SOURCE_FIELDS.map((field) => `data.${field}`),
    values: { "data.id": /^dc_/, "data.component_id": "{component_id}", "data.user_id": "{user_id}", "data.active": true },
  },
  "Update a source": { method: "PUT", path: "/v1/sources/{source_id}", body: { active: true }, status: 200, fields: SOURCE_FIELDS.map((field) => `data.${field}`), values: { "data.id": "{source_id}" } },
  "Delete a source": { method: "DELETE", path: "/v1/sources/{doomed_source_id}", status: 204 },
  "List current user sources": { method: "GET", path: "/v1/users/me/sources", status: 200, fields: [...PAGE_FIELDS, ...SOURCE_FIELDS.map((field) => `data[].${field}`)] },
  "Get source events": {
    method: "GET",
    path: "/v1/sources/{source_id}/event_summaries",
    query: { expand: "event" },
    status: 200,
    fields: [...PAGE_FIELDS, "data[].id", "data[].indexed_at_ms", "data[].event", "data[].metadata.emit_id", "data[].metadata.name", "data[].metadata.emitter_id", "data[].metadata.id"],
    values: { "data.0.metadata.emitter_id": "{source_id}", "data.0.event.id": "o-2" },
  },
  "Delete source events": { method: "DELETE", path: "/v1/sources/{emptied_source_id}/events", status: 202 },
  "Source event stream (SSE)": { method: "GET", path: "/v1/sources/{source_id}/sse", status: 200, stream: true },
  "Source event stream at the stream host (SSE)": { method: "GET", path: "/sse/{source_id}/emits", status: 200, stream: true },
  "Get source logs": { method: "GET", path: "/v1/sources/{source_id}/logs", status: 200, fields: [...PAGE_FIELDS, "data[].id", "data[].ts", "data[].text"] },
  "Source log stream (SSE)": { method: "GET", path: "/v1/sources/{source_id}/logs/sse", status: 200, stream: true },
  "Source log stream at the stream host (SSE)": { method: "GET", path: "/sse/{source_id}/observations", status: 200, stream: true },

  // Workflows
  "Create a workflow": {
    method: "POST",
    path: "/v1/workflows",
    body: {
      org_id: "{org_id}",
      project_id: "proj_abc123",
      template_id: "tch_abc123",
      steps: [{ namespace: "code", code: EMITS, props: {} }],
      triggers: [{ type: "http" }],
      settings: { name: "contract created", auto_deploy: true },
    },
    status: 200,
    fields: ["data.id", "data.name", "data.active", "data.steps", "data.triggers[].endpoint_url"],
    values: { "data.id": /^p_/, "data.name": "contract created" },
  },
  "Get a workflow's details": {
    method: "GET",
    path: "/v1/workflows/{workflow_id}",
    query: { org_id: "{org_id}" },
    status: 200,
    fields: ["triggers[].id", "triggers[].endpoint_url", "triggers[].custom_response", "steps[].id", "steps[].namespace", "steps[].disabled", "steps[].component", "steps[].savedComponent.id"],
    values: { "steps.0.namespace": "emit" },
  },
  "Update a workflow": { method: "PUT", path: "/v1/workflows/{workflow_id}", body: { active: true, org_id: "{org_id}" }, status: 200, fields: ["data.id", "data.active"], values: { "data.active": true } },
  "Delete a workflow": { method: "DELETE", path: "/v1/workflows/{doomed_workflow_id}", status: 204 },
  "List current user workflows": { method: "GET", path: "/v1/users/me/workflows", status: 200, fields: [...PAGE_FIELDS, "data[].id", "data[].name", "data[].active"] },
  "Get workflow emits": {
    method: "GET",
    path: "/v1/workflows/{workflow_id}/event_summaries",
    query: { expand: "event", limit: "1" },
    status: 200,
    fields: [...PAGE_FIELDS, "data[].id", "data[].indexed_at_ms", "data[].event.raw_event", "data[].metadata.emit_id", "data[].metadata.name", "data[].metadata.emitter_id"],
    values: { "data.0.event.raw_event": { name: "Luke", title: "Jedi" }, "data.0.metadata.emitter_id": "{workflow_id}", "page_info.count": 1 },
  },
  "Get workflow errors": {
    method: "GET",
    path: "/v1/workflows/{failing_workflow_id}/$errors/event_summaries",
    query: { expand: "event", limit: "1" },
    status: 200,
    fields: [
      ...PAGE_FIELDS,
      "data[].id",
      "data[].indexed_at_ms",
      "data[].event.original_event",
      "data[].event.original_context.id",
      "data[].event.original_context.workflow_id",
      "data[].event.original_context.deployment_id",
      "data[].event.original_context.owner_id",
      "data[].event.error.code",
      "data[].event.error.msg",
      "data[].event.error.cellId",
      "data[].event.error.ts",
      "data[].event.error.stack",
      "data[].metadata.emitter_id",
      "data[].metadata.emit_id",
      "data[].metadata.name",
    ],
    values: { "data.0.metadata.name": "$errors", "data.0.event.original_context.workflow_id": "{failing_workflow_id}" },
  },

  // Subscriptions
  "Listen for events from another source or workflow": {
    method: "POST",
    path: "/v1/subscriptions",
    query: { emitter_id: "{source_id}", listener_id: "{listener_id}", event_name: "" },
    emptyJsonBody: true,
    status: 200,
    fields: SUBSCRIPTION_FIELDS.map((field) => `data.${field}`),
    values: { "data.emitter_id": "{source_id}", "data.listener_id": "{listener_id}", "data.event_name": "" },
  },
  "Automatically subscribe a listener to events from new workflows / sources": {
    method: "POST",
    path: "/v1/auto_subscriptions",
    query: { event_name: "$errors", listener_id: "{listener_id}" },
    status: 200,
    fields: SUBSCRIPTION_FIELDS.map((field) => `data[].${field}`),
  },
  "Get current user's subscriptions": { method: "GET", path: "/v1/users/me/subscriptions", status: 200, fields: SUBSCRIPTION_FIELDS.map((field) => `data[].${field}`) },
  "Get workspace's subscriptions": { method: "GET", path: "/v1/workspaces/{org_id}/subscriptions", status: 200, fields: SUBSCRIPTION_FIELDS.map((field) => `data[].${field}`) },
  "Delete a subscription": { method: "DELETE", path: "/v1/subscriptions", query: { emitter_id: "{source_id}", listener_id: "{listener_id}", event_name: "" }, status: 204 },

  // Users and workspaces
  "Get current user info": { method: "GET", path: "/v1/users/me", status: 200, fields: ["data.id", "data.username", "data.email", "data.orgs[].id"], values: { "data.id": "{user_id}" } },
  "Get current user's workspaces": { method: "GET", path: "/v1/users/me/workspaces", status: 200, fields: ["data[].id", "data[].name", "data[].orgname"], values: { "data.0.id": "{org_id}" } },
  "Get workspace's sources": { method: "GET", path: "/v1/orgs/{org_id}/sources", status: 200, fields: [...PAGE_FIELDS, ...SOURCE_FIELDS.map((field) => `data[].${field}`)] },

  // Webhooks (the hosted reference sends these with `Content-Type: application/json` and no body, the fields in the query)
  "Create a webhook": {
    method: "POST",
    path: "/v1/webhooks",
    query: { url: "{receiver_url}", name: "contract", description: "the contract's receiver" },
    emptyJsonBody: true,
    status: 200,
    fields: WEBHOOK_FIELDS.map((field) => `data.${field}`),
    values: { "data.id": /^wh_/, "data.user_id": "{user_id}", "data.name": "contract", "data.description": "the contract's receiver", "data.url": "{receiver_url}", "data.active": true },
  },
  "Get current user's webhooks": { method: "GET", path: "/v1/users/me/webhooks", status: 200, fields: [...PAGE_FIELDS, ...WEBHOOK_FIELDS.map((field) => `data[].${field}`)] },
  "Send a source's events to a webhook (subscription with a wh_ listener)": {
    method: "POST",
    path: "/v1/subscriptions",
    query: { emitter_id: "{source_id}", listener_id: "{webhook_id}", event_name: "" },
    emptyJsonBody: true,
    status: 200,
    fields: SUBSCRIPTION_FIELDS.map((field) => `data.${field}`),
    values: { "data.emitter_id": "{source_id}", "data.listener_id": "{webhook_id}", "data.event_name": "" },
  },
  "Delete a webhook": { method: "DELETE", path: "/v1/webhooks/{doomed_webhook_id}", emptyJsonBody: true, status: 204 },
};

/** Fixture values that rows name as `{name}`. */
let fixture: Record<string, string>;
let server: TestServer;
let key: string;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

function fill<T>(value: T): T {
  if (typeof value === "string") return value.replace(/\{([a-z_]+)\}/g, (whole, name: string) => fixture[name] ?? whole) as T;
  if (Array.isArray(value)) return value.map(fill) as T;
  if (value && typeof value === "object" && !(value instanceof RegExp)) return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, fill(item)])) as T;
  return value;
}

/** The values at a field path; `[]` steps into every item of a list, which must not be empty (so that the check cannot pass on nothing). */
function valuesAt(body: unknown, path: string): unknown[] {
  let current: unknown[] = [body];
  for (const part of path.split(".")) {
    const each = part.endsWith("[]");
    const name = each ? part.slice(0, -2) : part;
    current = current.flatMap((item) => {
      const value = item !== null && typeof item === "object" ? (item as Record<string, unknown>)[name] : undefined;
      if (!each) return [value];
      if (!Array.isArray(value) || value.length === 0) return [undefined];
      return value;
    });
  }
  return current;
}

beforeAll(async () => {
  // Webhooks deliver to a receiver on loopback: allowed here, as an admin allows an internal host.
  receiver = await startWebhookReceiver();
  server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
  const user = await createUser(server, "contract");
  key = user.key;
  const org = (await call(server.url, "GET", "/v1/users/me/workspaces", { key })).body.data[0].id;
  const component = await call(server.url, "POST", "/v1/components", { key, json: { component_code: EMITTER } });
  const published = await call(server.url, "POST", "/v1/components/registry", { key, json: { component_code: PUBLISHED, filename: "notify.mjs" } });
  if (published.status !== 201) throw new Error(`publishing failed: ${JSON.stringify(published.body)}`);
  const source = await deploySource(server, key, { component_code: EMITTER, name: "contract-source" });
  const emptied = await deploySource(server, key, { component_code: EMITTER, name: "contract-emptied" });
  const doomedSource = await deploySource(server, key, { component_code: EMITTER, name: "contract-doomed" });
  for (const body of [{ id: "o-1" }, { id: "o-2" }]) await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await fetch(emptied.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"id":"gone"}' });

  const workflow = async (body: Record<string, unknown>) => {
    const created = await call(server.url, "POST", "/v1/workflows", { key, json: body });
    if (created.status !== 200) throw new Error(`creating a workflow failed: ${JSON.stringify(created.body)}`);
    return created.body.data;
  };
  const emitting = await workflow({ name: "contract emits", trigger: { type: "http" }, steps: [{ name: "emit", code: EMITS }] });
  const failing = await workflow({ name: "contract fails", trigger: { type: "http" }, steps: [{ name: "fail", code: FAILS }] });
  const listener = await workflow({ name: "contract listener", steps: [] });
  const doomedWorkflow = await workflow({ name: "contract doomed", steps: [] });
  await fetch(emitting.trigger.endpoint_url, { method: "POST" });
  await fetch(failing.trigger.endpoint_url, { method: "POST" });
  const has = (path: string) => async () => ((await call(server.url, "GET", path, { key })).body.data?.length > 0 ? true : undefined);
  await eventually(has(`/v1/workflows/${emitting.id}/event_summaries`), 20_000, "the workflow's emit");
  await eventually(has(`/v1/workflows/${failing.id}/$errors/event_summaries`), 20_000, "the workflow's error");
  await eventually(has(`/v1/sources/${source.id}/logs`), 10_000, "the source's logs");
  const webhook = async (name: string) => {
    const created = await call(server.url, "POST", "/v1/webhooks", { key, json: { url: receiver.url, name } });
    if (created.status !== 200) throw new Error(`creating a webhook failed: ${JSON.stringify(created.body)}`);
    return created.body.data;
  };
  const listedWebhook = await webhook("contract listed");
  const doomedWebhook = await webhook("contract doomed");

  fixture = {
    user_id: user.id,
    org_id: org,
    component_id: component.body.data.id,
    source_id: source.id,
    emptied_source_id: emptied.id,
    doomed_source_id: doomedSource.id,
    workflow_id: emitting.id,
    failing_workflow_id: failing.id,
    listener_id: listener.id,
    doomed_workflow_id: doomedWorkflow.id,
    source_endpoint_url: source.endpoint_url,
    receiver_url: receiver.url,
    webhook_id: listedWebhook.id,
    doomed_webhook_id: doomedWebhook.id,
  };
}, 90_000);
afterAll(async () => {
  await server.close();
  await receiver.close();
});

describe("the documented API, called as documented", () => {
  // In the table's order: rows that delete come after the rows that read what they delete.
  it.each(Object.entries(CONTRACT))("%s", async (_endpoint, row) => {
    const query = row.query ? `?${new URLSearchParams(fill(row.query))}` : "";
    const url = `${fill(row.path)}${query}`;
    if (row.stream) {
      const stream = await openStream(`${server.url}${url}`, key);
      try {
        expect(stream.status).toBe(row.status);
        expect(stream.contentType).toContain("text/event-stream");
      } finally {
        await stream.close();
      }
      return;
    }
    const response = await call(server.url, row.method, url, {
      key,
      ...(row.body !== undefined ? { json: fill(row.body) } : {}),
      ...(row.emptyJsonBody ? { rawBody: "" } : {}),
    });
    expect({ status: response.status, body: response.body }).toMatchObject({ status: row.status });
    if (row.status !== 204) expect(response.headers.get("content-type")).toContain("application/json");
    for (const field of row.fields ?? []) {
      const found = valuesAt(response.body, field);
      expect({ field, missing: found.some((value) => value === undefined) }).toEqual({ field, missing: false });
    }
    for (const [field, expected] of Object.entries(row.values ?? {})) {
      const [actual] = valuesAt(response.body, field);
      if (expected instanceof RegExp) expect({ field, actual }).toEqual({ field, actual: expect.stringMatching(expected) });
      else expect({ field, actual }).toEqual({ field, actual: fill(expected) });
    }
  });
});

describe("a webhook subscribed as documented", () => {
  // After the table, whose row "Send a source's events to a webhook" made the subscription.
  it("gets the source's next event POSTed to its URL as JSON", async () => {
    const sent = await fetch(fixture.source_endpoint_url!, { method: "POST", headers: { "content-type": "application/json" }, body: '{"id":"o-3"}' });
    expect(sent.status).toBe(200);
    const delivered = await eventually(
      async () => receiver.received.find((request) => request.headers["x-runnel-webhook-id"] === fixture.webhook_id),
      10_000,
      "the webhook's delivery",
    );
    expect(delivered.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(delivered.body)).toEqual({ id: "o-3" });
    expect(delivered.headers["x-runnel-emitter-id"]).toBe(fixture.source_id);
  });
});
