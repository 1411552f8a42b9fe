import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogCode } from "../helpers/catalog.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, logsOf } from "../helpers/sources.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";

/**
 * The HTTP catalog end to end: the new-requests source answering real requests
 * (and refusing unsigned ones), and the actions run as workflow steps against a
 * real local HTTP server.
 */

interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: TestServer;
let key: string;
let peer: Server;
let peerUrl = "";
const received: Received[] = [];
const code: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
  key = server.adminKey;
  for (const path of [
    "sources/new-requests/new-requests.mjs",
    "actions/return-http-response/return-http-response.mjs",
    "actions/custom-request/custom-request.mjs",
    "actions/verify-hmac-signature/verify-hmac-signature.mjs",
  ]) {
    code[path.split("/")[1]!] = await catalogCode(`http/${path}`);
  }
  // The peer the send-request action talks to: /json answers JSON, /fail a 500, anything else text.
  peer = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://localhost");
      received.push({ method: request.method ?? "", path: url.pathname, query: Object.fromEntries(url.searchParams), headers: request.headers, body });
      if (url.pathname === "/fail") {
        response.writeHead(500, { "content-type": "text/plain" }).end("the peer broke");
      } else if (url.pathname === "/json") {
        response.writeHead(200, { "content-type": "application/json", "x-peer": "yes" }).end(JSON.stringify({ echoed: body ? JSON.parse(body) : null }));
      } else {
        response.writeHead(200, { "content-type": "text/plain" }).end("plain answer");
      }
    });
  });
  await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
  const address = peer.address();
  peerUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(async () => {
  peer.closeAllConnections();
  await new Promise((resolve) => peer.close(resolve));
  await server.close();
});

const sign = (algorithm: string, secret: string, text: string, encoding: "hex" | "base64" = "hex") => createHmac(algorithm, secret).update(text).digest(encoding);
const deployNewRequests = (name: string, configured_props: Record<string, unknown> = {}) =>
  deploySource(server, key, { component_code: code["new-requests"], name, configured_props });
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

async function onlyRun(workflowId: string): Promise<any> {
  const [run] = await waitFor(() => runsOf(server, key, workflowId), (runs) => runs.length >= 1 && runs[0].status !== "running", "the run");
  return run;
}

describe("http-new-requests", () => {
  it("emits the whole request and answers 200 with {ok: true}", async () => {
    const source = await deployNewRequests("full requests");
    const answer = await post(`${source.endpoint_url}/orders?x=1`, '{"id":7}', { "x-extra": "yes" });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ok: true });
    const [event] = await eventsOf(server, key, source.id);
    expect(event.event).toMatchObject({ method: "POST", path: "/orders", query: { x: "1" }, body: { id: 7 }, bodyRaw: '{"id":7}' });
    expect(event.event.headers["x-extra"]).toBe("yes");
    expect(event.metadata.summary).toBe("POST /orders");
  });

  it("emits only the body and answers with the custom response", async () => {
    const source = await deployNewRequests("body only", {
      emitBodyOnly: true,
      responseStatus: 202,
      responseBody: "thanks",
      responseHeaders: { "content-type": "text/plain", "x-made-by": "catalog" },
    });
    const answer = await post(source.endpoint_url, '{"hello":"world"}');
    expect(answer.status).toBe(202);
    expect(answer.headers.get("x-made-by")).toBe("catalog");
    expect(await answer.text()).toBe("thanks");
    const get = await fetch(`${source.endpoint_url}?q=1`);
    expect(get.status).toBe(202);
    const events = await eventsOf(server, key, source.id);
    expect(events.map((e) => e.event).reverse()).toEqual([{ hello: "world" }, null]);
  });

  it("checks a shared secret: the right one is accepted, a wrong or missing one answered 401 with nothing emitted", async () => {
    const source = await deployNewRequests("shared secret", { verification: "shared-secret", secret: "s3cret" });
    expect((await post(source.endpoint_url, '{"n":1}', { "x-webhook-secret": "s3cret" })).status).toBe(200);
    const wrong = await post(source.endpoint_url, '{"n":2}', { "x-webhook-secret": "guess" });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: "Unauthorized: the x-webhook-secret header does not hold the shared secret." });
    expect((await post(source.endpoint_url, '{"n":3}')).status).toBe(401);
    const accepted = await eventsOf(server, key, source.id);
    expect(accepted.map((e) => e.event.body)).toEqual([{ n: 1 }]);
    expect(accepted[0].event.headers).not.toHaveProperty("x-webhook-secret"); // the secret stays out of the event log
    const logs = await logsOf(server, key, source.id);
    expect(logs.some((line) => line.includes("Refused POST / with 401: the request has no x-webhook-secret header. Nothing was emitted."))).toBe(true);

    const bearer = await deployNewRequests("bearer secret", { verification: "shared-secret", secret: "tok", header: "Authorization" });
    expect((await post(bearer.endpoint_url, "{}", { authorization: "Bearer tok" })).status).toBe(200);
    expect((await post(bearer.endpoint_url, "{}", { authorization: "Bearer nope" })).status).toBe(401);
    expect(await eventsOf(server, key, bearer.id)).toHaveLength(1);
  });

  it("checks X-Hub-Signature-256 and X-Signature HMACs of the raw body", async () => {
    const hub = await deployNewRequests("hub signature", { verification: "hub-signature-256", secret: "hub-key" });
    const body = '{"action":"opened"}';
    expect((await post(hub.endpoint_url, body, { "x-hub-signature-256": `sha256=${sign("sha256", "hub-key", body)}` })).status).toBe(200);
    const tampered = await post(hub.endpoint_url, '{"action":"closed"}', { "x-hub-signature-256": `sha256=${sign("sha256", "hub-key", body)}` });
    expect(tampered.status).toBe(401);
    expect(((await tampered.json()) as { error: string }).error).toBe("Unauthorized: the SHA256 signature does not match the body and the secret.");
    expect((await post(hub.endpoint_url, body, { "x-hub-signature-256": sign("sha256", "hub-key", body) })).status).toBe(401); // no sha256= prefix
    expect((await eventsOf(server, key, hub.id)).map((e) => e.event.bodyRaw)).toEqual([body]);

    const plain = await deployNewRequests("x-signature", { verification: "x-signature", secret: "k2" });
    expect((await post(plain.endpoint_url, body, { "x-signature": sign("sha256", "k2", body, "base64") })).status).toBe(200);
    expect((await post(plain.endpoint_url, body, { "x-signature": sign("sha256", "k2", body) })).status).toBe(200);
    expect((await post(plain.endpoint_url, body, { "x-signature": sign("sha256", "other", body) })).status).toBe(401);
    expect(await eventsOf(server, key, plain.id)).toHaveLength(2);
  });

  it("checks a timestamped t=…,v1=… signature and refuses one outside the tolerance", async () => {
    const source = await deployNewRequests("timestamped", { verification: "timestamped", secret: "whsec", header: "X-Sig", toleranceSeconds: 60 });
    const body = '{"type":"invoice.paid"}';
    const now = Math.floor(Date.now() / 1000);
    const header = (t: number) => `t=${t},v1=${sign("sha256", "whsec", `${t}.${body}`)}`;
    expect((await post(source.endpoint_url, body, { "x-sig": header(now) })).status).toBe(200);
    const stale = await post(source.endpoint_url, body, { "x-sig": header(now - 600) });
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { error: string }).error).toMatch(/the timestamp is 6\d\d s away from now, more than the 60 s allowed/);
    expect((await post(source.endpoint_url, body, { "x-sig": `t=${now},v1=deadbeef` })).status).toBe(401);
    expect(await eventsOf(server, key, source.id)).toHaveLength(1);
  });

  it("refuses a deploy that cannot check anything, naming the prop", async () => {
    const noSecret = await call(server.url, "POST", "/v1/sources", { key, json: { component_code: code["new-requests"], configured_props: { verification: "hub-signature-256" } } });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error.message).toContain('Prop "secret" is required when "verification" is "hub-signature-256"');
    const unknown = await call(server.url, "POST", "/v1/sources", { key, json: { component_code: code["new-requests"], configured_props: { verification: "md5" } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.field).toBe("configured_props.verification");
    const badStatus = await call(server.url, "POST", "/v1/sources", { key, json: { component_code: code["new-requests"], configured_props: { responseStatus: 700 } } });
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error.details.field).toBe("configured_props.responseStatus");
  });
});

describe("http-return-http-response", () => {
  it("answers the workflow's caller with the status, headers and body given", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Respond",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [{ name: "respond", code: code["return-http-response"], props: { status: 201, headers: { "x-order": "o-1" }, body: "{{steps.trigger.event.body}}" } }],
    });
    const answer = await post(workflow.trigger.endpoint_url, '{"id":"o-1","total":3}');
    expect(answer.status).toBe(201);
    expect(answer.headers.get("x-order")).toBe("o-1");
    expect(await answer.json()).toEqual({ id: "o-1", total: 3 });
    const run = await onlyRun(workflow.id);
    expect(run.steps[0]).toMatchObject({ status: "success", summary: "Responded with HTTP 201" });
  });

  it("refuses a status outside 100-599 when the workflow is saved", async () => {
    const refused = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: { name: "Bad respond", trigger: { type: "http" }, respond: "workflow", steps: [{ name: "respond", code: code["return-http-response"], props: { status: 700 } }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("steps[0].props.status");
  });
});

describe("http-custom-request", () => {
  it("sends the method, URL, query, headers, auth and JSON body, and returns the parsed answer", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Send request",
      trigger: { type: "http" },
      steps: [
        {
          name: "send",
          code: code["custom-request"],
          props: {
            request: {
              method: "POST",
              url: `${peerUrl}/json`,
              params: { page: "2" },
              headers: { "x-token": "{{steps.trigger.event.body.token}}" },
              auth: { type: "basic", username: "ada", password: "pw" },
              body: { order: "{{steps.trigger.event.body.order}}" },
            },
          },
        },
      ],
    });
    received.length = 0;
    await post(workflow.trigger.endpoint_url, '{"token":"t-1","order":"o-9"}');
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("success");
    expect(run.steps[0].$return_value).toEqual({ echoed: { order: "o-9" } });
    expect(run.steps[0].exports.status).toBe(200);
    expect(run.steps[0].exports.headers["x-peer"]).toBe("yes");
    expect(run.steps[0].summary).toBe(`POST ${peerUrl}/json answered 200`);
    const [request] = received;
    expect(request).toMatchObject({ method: "POST", path: "/json", query: { page: "2" }, body: '{"order":"o-9"}' });
    expect(request!.headers["x-token"]).toBe("t-1");
    expect(request!.headers.authorization).toBe(`Basic ${Buffer.from("ada:pw").toString("base64")}`);
  });

  it("returns any status by default, and fails the step on an error status when asked", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Send to a failing peer",
      trigger: { type: "http" },
      steps: [
        { name: "tolerant", code: code["custom-request"], props: { request: { url: `${peerUrl}/fail`, auth: { type: "bearer", token: "b-1" } } } },
        { name: "strict", code: code["custom-request"], props: { request: { url: `${peerUrl}/fail` }, failOnErrorStatus: true } },
      ],
    });
    received.length = 0;
    await post(workflow.trigger.endpoint_url, "{}");
    const run = await onlyRun(workflow.id);
    expect(run.steps[0]).toMatchObject({ status: "success", $return_value: "the peer broke", exports: { status: 500 } });
    expect(received[0]!.headers.authorization).toBe("Bearer b-1");
    expect(run.status).toBe("error");
    expect(run.error.msg).toBe(`GET ${peerUrl}/fail answered 500: the peer broke`);
  });

  it("fails with a clear error when the request has no URL", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Send without url",
      trigger: { type: "http" },
      steps: [{ name: "send", code: code["custom-request"], props: { request: { method: "GET", url: "{{steps.trigger.event.body.missing}}" } } }],
    });
    await post(workflow.trigger.endpoint_url, "{}");
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("error");
    expect(run.error.msg).toContain('Prop "request" has no url');
  });

  it("fails with the network policy's refusal for an address code may not reach", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Send to metadata",
      trigger: { type: "http" },
      steps: [{ name: "send", code: code["custom-request"], props: { request: { url: "http://169.254.169.254/latest/meta-data" } } }],
    });
    await post(workflow.trigger.endpoint_url, "{}");
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("error");
    expect(run.error.msg).toContain("refused by Runnel's network policy");
  });
});

describe("http-verify-hmac-signature", () => {
  const verifyStep = (props: Record<string, unknown>) => ({
    name: "verify",
    code: code["verify-hmac-signature"],
    props: { payload: "{{steps.trigger.event.bodyRaw}}", signature: '{{steps.trigger.event.headers["x-hub-signature-256"]}}', secret: "hmac-key", ...props },
  });
  const after = { name: "after", code: "export default defineComponent({ async run() { return 'reached'; } })" };

  it("lets a valid signature through and ends the workflow on a mismatch", async () => {
    const workflow = await createWorkflow(server, key, { name: "Verify", trigger: { type: "http" }, steps: [verifyStep({}), after] });
    const body = '{"event":"push"}';
    await post(workflow.trigger.endpoint_url, body, { "x-hub-signature-256": `sha256=${sign("sha256", "hmac-key", body)}` });
    const good = await onlyRun(workflow.id);
    expect(good.status).toBe("success");
    expect(good.steps.map((s: any) => s.$return_value)).toEqual([{ verified: true, algorithm: "sha256" }, "reached"]);
    await post(workflow.trigger.endpoint_url, body, { "x-hub-signature-256": `sha256=${sign("sha256", "wrong", body)}` });
    const [bad] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 2 && runs[0].status !== "running", "the second run");
    expect(bad.status).toBe("exited");
    expect(bad.exit_reason).toBe("Signature check failed: the SHA256 signature does not match the body and the secret.");
    expect(bad.steps[1].status).toBe("skipped");
    await post(workflow.trigger.endpoint_url, body);
    const [unsigned] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 3 && runs[0].status !== "running", "the third run");
    expect(unsigned.status).toBe("exited");
    expect(unsigned.exit_reason).toBe("Signature check failed: the request carries no signature.");
  });

  it("checks SHA-1 in base64 with a timestamp, and fails the step on a stale one when told to throw", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Verify timestamped",
      trigger: { type: "http" },
      steps: [
        verifyStep({
          signature: '{{steps.trigger.event.headers["x-signature"]}}',
          timestamp: '{{steps.trigger.event.headers["x-timestamp"]}}',
          algorithm: "sha1",
          encoding: "base64",
          toleranceSeconds: 60,
          onMismatch: "throw",
        }),
        after,
      ],
    });
    const body = '{"event":"paid"}';
    const now = Math.floor(Date.now() / 1000);
    await post(workflow.trigger.endpoint_url, body, { "x-timestamp": String(now), "x-signature": sign("sha1", "hmac-key", `${now}.${body}`, "base64") });
    const good = await onlyRun(workflow.id);
    expect(good.status).toBe("success");
    expect(good.steps[0].$return_value).toEqual({ verified: true, algorithm: "sha1", timestamp: String(now) });
    const old = now - 3600;
    await post(workflow.trigger.endpoint_url, body, { "x-timestamp": String(old), "x-signature": sign("sha1", "hmac-key", `${old}.${body}`, "base64") });
    const [bad] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 2 && runs[0].status !== "running", "the second run");
    expect(bad.status).toBe("error");
    expect(bad.error.msg).toMatch(/^Signature check failed: the timestamp is 36\d\d s away from now, more than the 60 s allowed/);
  });

  it("refuses an unknown algorithm or encoding when the workflow is saved", async () => {
    for (const [prop, value] of [["algorithm", "md5"], ["encoding", "base32"], ["onMismatch", "ignore"]] as const) {
      const refused = await call(server.url, "POST", "/v1/workflows", { key, json: { name: `Bad ${prop}`, trigger: { type: "http" }, steps: [verifyStep({ [prop]: value })] } });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.field).toBe(`steps[0].props.${prop}`);
    }
  });
});
