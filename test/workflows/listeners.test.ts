import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, logsOf } from "../helpers/sources.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { createWorkflow, runsOf, waitFor } from "./helpers.js";

// Listeners beyond workflows: sources (their run gets the event), webhooks (the event is POSTed), and `$logs`.
let server: TestServer;
beforeAll(async () => {
  // The receivers live on loopback: allowed here, as an admin would allow an internal host.
  server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1", RUNNEL_WEBHOOK_RETRY_BASE_MS: "20", RUNNEL_WEBHOOK_MAX_ATTEMPTS: "4" });
});
afterAll(() => server.close());

const subscribe = (key: string, query: string) => call(server.url, "POST", `/v1/subscriptions?${query}`, { key, rawBody: "" });

/** An HTTP source that emits each request's body, and logs a line per request. */
const ECHO_SOURCE = `export default {
  name: "Echo", version: "0.0.1", props: { http: "$.interface.http" },
  async run(event) { console.log("got", event.body.n); this.$emit(event.body, { summary: "n " + event.body.n }); },
}`;

/**
 * A source that listens to itself: a request is emitted as {origin: "http"};
 * its own event comes back to run, which emits {origin: "self"}; that one
 * comes back too and is only logged (the component guards its own loop).
 */
const SELF_SOURCE = `export default {
  name: "Self listener", version: "0.0.1", props: { http: "$.interface.http" },
  async run(event) {
    if (event && event.origin === "self") { console.log("heard my own echo", event.n); return; }
    if (event && event.origin === "http") { this.$emit({ origin: "self", n: event.n }); return; }
    this.$emit({ origin: "http", n: event.body.n });
  },
}`;

async function post(url: string, body: unknown): Promise<number> {
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await answer.text();
  return answer.status;
}

describe.concurrent("listeners beyond workflows (each test its own user)", () => {
  it("a source subscribed to itself gets its own events in run, once each", async () => {
    const { key } = await createUser(server, "selma");
    const source = await deploySource(server, key, { component_code: SELF_SOURCE, name: "self" });
    const made = await subscribe(key, `emitter_id=${source.id}&listener_id=${source.id}`);
    expect(made.status).toBe(200);
    expect(made.body.data).toMatchObject({ emitter_id: source.id, listener_id: source.id, event_name: "" });

    expect(await post(source.endpoint_url, { n: 7 })).toBe(200);
    await waitFor(() => logsOf(server, key, source.id), (lines) => lines.some((line) => line.includes("heard my own echo 7")), "the source's run of its own second event");
    const events = await eventsOf(server, key, source.id);
    // The request's event, and the one its run of that event emitted: each run once, nothing doubled.
    expect(events.map((event) => event.event)).toEqual([
      { origin: "self", n: 7 },
      { origin: "http", n: 7 },
    ]);
    expect((await logsOf(server, key, source.id)).filter((line) => line.includes("heard my own echo"))).toHaveLength(1);

    // Through the dc_* glob a source never hears itself (no loop by accident): only by its own id.
    const other = await deploySource(server, key, { component_code: ECHO_SOURCE, name: "glob listener" });
    expect((await subscribe(key, `emitter_id=dc_*&listener_id=${other.id}`)).status).toBe(200);
    // A workflow may still not listen to itself.
    const workflow = await createWorkflow(server, key, { name: "Loner", trigger: { type: "http" }, steps: [] });
    const refused = await subscribe(key, `emitter_id=${workflow.id}&listener_id=${workflow.id}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("listener_id");
    // Deleting the listening source takes its subscriptions with it.
    expect((await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key })).status).toBe(204);
    const left = (await call(server.url, "GET", "/v1/users/me/subscriptions", { key })).body.data;
    expect(left.filter((subscription: any) => subscription.listener_id === source.id)).toEqual([]);
  });

  it("a webhook gets each event POSTed, signed and keyed, retried with backoff until it answers", async () => {
    const { key } = await createUser(server, "wanda");
    const receiver = await startWebhookReceiver({ failFirst: 2 });
    try {
      const created = await call(server.url, "POST", `/v1/webhooks?url=${encodeURIComponent(receiver.url)}&name=mine&description=${encodeURIComponent("my receiver")}`, { key, rawBody: "" });
      expect(created.status).toBe(200);
      const webhook = created.body.data;
      expect(webhook).toMatchObject({ id: expect.stringMatching(/^wh_/), name: "mine", description: "my receiver", url: receiver.url, active: true, signing_secret: expect.stringMatching(/^whsec_/) });
      // The secret is shown once: never in a listing or a read.
      const listed = await call(server.url, "GET", "/v1/users/me/webhooks", { key });
      expect(listed.body.data).toEqual([{ id: webhook.id, user_id: webhook.user_id, name: "mine", description: "my receiver", url: receiver.url, active: true, created_at: webhook.created_at, updated_at: webhook.updated_at }]);
      expect(JSON.stringify((await call(server.url, "GET", `/v1/webhooks/${webhook.id}`, { key })).body)).not.toContain(webhook.signing_secret);

      const source = await deploySource(server, key, { component_code: ECHO_SOURCE, name: "to webhook" });
      expect((await subscribe(key, `emitter_id=${source.id}&listener_id=${webhook.id}`)).status).toBe(200);
      expect(await post(source.endpoint_url, { n: 1 })).toBe(200);
      const [event] = await eventsOf(server, key, source.id);

      const deliveries = await waitFor(
        async () => (await call(server.url, "GET", `/v1/webhooks/${webhook.id}/deliveries`, { key })).body.data,
        (items: any[]) => items[0]?.status === "delivered",
        "the delivery to succeed",
      );
      expect(deliveries).toEqual([
        expect.objectContaining({ webhook_id: webhook.id, emitter_id: source.id, event_id: event.id, event_name: "", status: "delivered", attempts: 3, last_status: 200, last_error: null, delivered_at: expect.any(Number) }),
      ]);
      expect(receiver.received.map((request) => request.answered)).toEqual([500, 500, 200]);
      for (const [index, request] of receiver.received.entries()) {
        expect(JSON.parse(request.body)).toEqual({ n: 1 });
        expect(request.headers["content-type"]).toBe("application/json");
        expect(request.headers["idempotency-key"]).toBe(`${webhook.id}:${source.id}:${event.id}`);
        expect(request.headers["x-runnel-event-id"]).toBe(event.id);
        expect(request.headers["x-runnel-attempt"]).toBe(String(index + 1));
        const expected = Buffer.from(`sha256=${createHmac("sha256", webhook.signing_secret).update(request.body).digest("hex")}`);
        const given = Buffer.from(String(request.headers["x-runnel-signature"]));
        expect(given.length === expected.length && timingSafeEqual(given, expected), "the signature verifies with the secret").toBe(true);
      }

      // Deleting the webhook takes its subscription and records with it.
      expect((await call(server.url, "DELETE", `/v1/webhooks/${webhook.id}`, { key })).status).toBe(204);
      expect((await call(server.url, "GET", `/v1/webhooks/${webhook.id}/deliveries`, { key })).status).toBe(404);
      expect((await call(server.url, "DELETE", `/v1/webhooks/${webhook.id}`, { key })).status).toBe(404);
      const left = (await call(server.url, "GET", "/v1/users/me/subscriptions", { key })).body.data;
      expect(left.filter((subscription: any) => subscription.listener_id === webhook.id)).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it("a webhook that never answers well is given up after the configured attempts, with the last error shown", async () => {
    const { key } = await createUser(server, "gil");
    const receiver = await startWebhookReceiver({ alwaysFail: true });
    try {
      const webhook = (await call(server.url, "POST", "/v1/webhooks", { key, json: { url: receiver.url } })).body.data;
      expect(webhook).toMatchObject({ name: null, description: null });
      const source = await deploySource(server, key, { component_code: ECHO_SOURCE, name: "to failing webhook" });
      expect((await subscribe(key, `emitter_id=${source.id}&listener_id=${webhook.id}`)).status).toBe(200);
      expect(await post(source.endpoint_url, { n: 2 })).toBe(200);
      const deliveries = await waitFor(
        async () => (await call(server.url, "GET", `/v1/webhooks/${webhook.id}/deliveries`, { key })).body.data,
        (items: any[]) => items[0]?.status === "failed",
        "the delivery to be given up",
      );
      expect(deliveries[0]).toMatchObject({ status: "failed", attempts: 4, last_status: 500, last_error: "The receiver answered HTTP 500.", delivered_at: null });
      expect(receiver.received).toHaveLength(4);
    } finally {
      await receiver.close();
    }
  });

  it("webhooks whose receiver hangs hold up no workflow's runs", async () => {
    const { key } = await createUser(server, "hanna");
    // A receiver that takes every request and never answers; it notes when a sender gives up on one.
    const held: Array<{ aborted: boolean }> = [];
    const hanging = createServer((request) => {
      const entry = { aborted: false };
      held.push(entry);
      request.on("close", () => (entry.aborted = true));
    });
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hook`;
    try {
      const source = await deploySource(server, key, { component_code: ECHO_SOURCE, name: "busy emitter" });
      // More hanging webhooks than the worker has slots for runs (4): before, they took every slot until their timeout.
      for (let i = 0; i < 6; i++) {
        const webhook = await call(server.url, "POST", `/v1/webhooks?url=${encodeURIComponent(url)}&name=hang${i}`, { key, rawBody: "" });
        expect((await subscribe(key, `emitter_id=${source.id}&listener_id=${webhook.body.data.id}`)).status).toBe(200);
      }
      const workflow = await createWorkflow(server, key, { name: "Unbothered", steps: [{ name: "note", code: "export default defineComponent({ async run({ steps }) { return steps.trigger.event.n; } })" }] });
      expect((await subscribe(key, `emitter_id=${source.id}&listener_id=${workflow.id}`)).status).toBe(200);

      expect(await post(source.endpoint_url, { n: 1 })).toBe(200);
      await waitFor(() => Promise.resolve(held.length), (count) => count === 6, "the six webhook requests to arrive");
      const runs = await waitFor(() => runsOf(server, key, workflow.id), (list) => list.length === 1, "the workflow's run");
      expect(runs[0]).toMatchObject({ status: "success" });
      // The run was recorded while every webhook request was still waiting on the receiver (none given up yet).
      expect(held.map((entry) => entry.aborted)).toEqual(Array(6).fill(false));
    } finally {
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });

  it("refuses webhook URLs on the server's own networks that the allow list does not name, and another user's webhook", async () => {
    const owner = await createUser(server, "pria");
    const other = await createUser(server, "otto");
    for (const url of ["http://10.0.0.5/hook", "http://[::1]:8080/hook", "http://169.254.169.254/latest/meta-data", "http://192.168.1.10/"]) {
      const refused = await call(server.url, "POST", `/v1/webhooks?url=${encodeURIComponent(url)}`, { key: owner.key, rawBody: "" });
      expect(refused.status, url).toBe(400);
      expect(refused.body.error.details.field).toBe("url");
      expect(refused.body.error.message).toContain(url);
      expect(refused.body.error.message).toContain("RUNNEL_EGRESS_ALLOW");
    }
    for (const url of ["ftp://example.com/x", "example.com", "http://"]) {
      const refused = await call(server.url, "POST", "/v1/webhooks", { key: owner.key, json: { url } });
      expect(refused.status, url).toBe(400);
      expect(refused.body.error.details.field).toBe("url");
    }
    expect((await call(server.url, "POST", "/v1/webhooks", { key: owner.key, json: {} })).body.error.details.field).toBe("url");
    expect((await call(server.url, "GET", "/v1/users/me/webhooks", { key: owner.key })).body.data).toEqual([]);

    const theirs = (await call(server.url, "POST", "/v1/webhooks", { key: other.key, json: { url: "http://127.0.0.1:9/x" } })).body.data;
    const source = await deploySource(server, owner.key, { component_code: ECHO_SOURCE, name: "mine" });
    const foreign = await subscribe(owner.key, `emitter_id=${source.id}&listener_id=${theirs.id}`);
    expect(foreign.status).toBe(404);
    expect((await call(server.url, "GET", `/v1/webhooks/${theirs.id}/deliveries`, { key: owner.key })).status).toBe(404);
    expect((await call(server.url, "DELETE", `/v1/webhooks/${theirs.id}`, { key: owner.key })).status).toBe(404);
  });

  it("takes org_id in the query of POST /v1/webhooks and /v1/subscriptions as clients send it: the own workspace passes, another user's is a 404", async () => {
    const owner = await createUser(server, "orla");
    const other = await createUser(server, "oscar");
    const workspaceOf = async (key: string) => (await call(server.url, "GET", "/v1/users/me/workspaces", { key })).body.data[0].id as string;
    const own = await workspaceOf(owner.key);
    const theirs = await workspaceOf(other.key);
    const url = encodeURIComponent("http://127.0.0.1:9/orgs");

    const created = await call(server.url, "POST", `/v1/webhooks?url=${url}&name=with-org&org_id=${own}`, { key: owner.key, rawBody: "" });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ id: expect.stringMatching(/^wh_/), name: "with-org", user_id: owner.id });
    const refused = await call(server.url, "POST", `/v1/webhooks?url=${url}&name=elsewhere&org_id=${theirs}`, { key: owner.key, rawBody: "" });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toMatchObject({ code: "NotFound", message: expect.stringContaining("/v1/users/me/workspaces") });
    // Nothing was made in either workspace by the refused call.
    expect((await call(server.url, "GET", "/v1/users/me/webhooks", { key: owner.key })).body.data.map((webhook: any) => webhook.name)).toEqual(["with-org"]);
    expect((await call(server.url, "GET", "/v1/users/me/webhooks", { key: other.key })).body.data).toEqual([]);

    // The subscription that points the webhook at a source, with org_id too.
    const source = await deploySource(server, owner.key, { component_code: ECHO_SOURCE, name: "org source" });
    const subscribed = await subscribe(owner.key, `emitter_id=${source.id}&listener_id=${created.body.data.id}&org_id=${own}`);
    expect(subscribed.status).toBe(200);
    expect((await subscribe(owner.key, `emitter_id=${source.id}&listener_id=${created.body.data.id}&org_id=${theirs}`)).status).toBe(404);
    // A write's query stays strict for what is not a workspace parameter.
    expect((await call(server.url, "POST", `/v1/webhooks?url=${url}&org_id=${own}&nmae=typo`, { key: owner.key, rawBody: "" })).body.error.details.field).toBe("nmae");
  });

  it("$logs: a workflow subscribed to a source's (or a workflow's) $logs gets each log line as an event", async () => {
    const { key } = await createUser(server, "lou");
    const source = await deploySource(server, key, { component_code: ECHO_SOURCE, name: "logger" });
    const look = "export default defineComponent({ async run({ steps }) { return steps.trigger.event; } })";
    const listener = await createWorkflow(server, key, { name: "Log reader", trigger: { type: "http" }, steps: [{ name: "look", code: look }] });
    expect((await subscribe(key, `emitter_id=${source.id}&listener_id=${listener.id}&event_name=$logs`)).status).toBe(200);

    expect(await post(source.endpoint_url, { n: 5 })).toBe(200);
    const runs = await waitFor(() => runsOf(server, key, listener.id), (list) => list.length === 1, "the listener's run of the log line");
    expect(runs[0].trigger.emitter_id).toBe(source.id);
    expect(runs[0].steps[0].$return_value).toEqual({ stream: "stdout", msg: "got 5", ts: expect.any(Number) });
    // The line is an event of the source's $logs channel; its default channel holds only what it emitted.
    expect((await eventsOf(server, key, source.id, "&event_name=$logs")).map((event) => event.event.msg)).toEqual(["got 5"]);
    expect((await eventsOf(server, key, source.id, "&event_name=")).map((event) => event.event)).toEqual([{ n: 5 }]);

    // A workflow's steps' lines, through an auto-subscription (every workflow and source, made later too).
    const auto = await createWorkflow(server, key, { name: "Every log", trigger: { type: "http" }, steps: [{ name: "look", code: look }] });
    expect((await call(server.url, "POST", `/v1/auto_subscriptions?event_name=$logs&listener_id=${auto.id}`, { key })).status).toBe(200);
    const talker = await createWorkflow(server, key, {
      name: "Talker",
      trigger: { type: "http" },
      steps: [{ name: "say", code: "export default defineComponent({ async run({ steps }) { console.log('talking', steps.trigger.event.body.n); return 1; } })" }],
    });
    expect(await post(talker.trigger.endpoint_url, { n: 9 })).toBe(200);
    const heard = await waitFor(
      () => runsOf(server, key, auto.id),
      (list) => list.some((run) => run.trigger.emitter_id === talker.id),
      "the auto listener's run of the talker's line",
    );
    const fromTalker = heard.filter((run) => run.trigger.emitter_id === talker.id);
    expect(fromTalker.map((run) => run.steps[0].$return_value.msg)).toEqual(["talking 9"]);
  });
});
