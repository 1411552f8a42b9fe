import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSchema } from "../helpers/postgres.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf } from "../helpers/sources.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";

/**
 * Anonymous requests to endpoints are batched: one bad request must fail
 * alone. Deep JSON bodies are refused at the door; a request whose events
 * the store refuses fails alone, while the good requests sent beside it are
 * all acknowledged and stored.
 */
const DEEP = "[".repeat(20_000) + "]".repeat(20_000);
const EMITTER = `module.exports = { name: "emitter", version: "0.1.0", props: { http: { type: "$.interface.http" } },
  async run(event) { this.$emit(event.body, { summary: event.body.bad ? "bad \\u0000 summary" : "n " + event.body.n }); } };`;

async function send(url: string, body: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: response.status, text: await response.text() };
}

describe("deep bodies among good requests (SQLite)", () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer();
    key = (await createUser(server, "ingest")).key;
  });
  afterAll(() => server?.close());

  it("refuses each deep body alone with a 400 naming the limit, and acknowledges and stores every good request sent at the same time", async () => {
    const source = await deploySource(server, key, { component_code: EMITTER });
    const workflow = await createWorkflow(server, key, { name: "Plain trigger", trigger: { type: "http" }, steps: [{ name: "echo", code: "export default defineComponent({ run({ steps }) { return steps.trigger.event.body.n; } })" }] });
    const requests: Array<Promise<{ kind: string; status: number; text: string }>> = [];
    for (let n = 0; n < 200; n++) {
      const target = n % 2 === 0 ? source.endpoint_url : workflow.trigger.endpoint_url;
      requests.push(send(target, JSON.stringify({ n })).then((answer) => ({ kind: "good", ...answer })));
      if (n % 50 === 25) requests.push(send(target, DEEP).then((answer) => ({ kind: "deep", ...answer })));
    }
    const answers = await Promise.all(requests);
    const good = answers.filter((answer) => answer.kind === "good");
    const deep = answers.filter((answer) => answer.kind === "deep");
    expect(good.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(deep).toHaveLength(4);
    for (const answer of deep) {
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text).error).toMatchObject({ code: "MalformedBody", message: expect.stringContaining("more than 256 levels deep") });
    }
    const events = await eventsOf(server, key, source.id);
    expect(events.map((event: any) => event.event.n).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i * 2));
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (list) => list.length >= 100, "the workflow's hundred runs");
    expect(runs).toHaveLength(100);
  });
});

describe("a request whose events the store refuses, batched with good ones (PostgreSQL)", () => {
  let database: Awaited<ReturnType<typeof createTestSchema>>;
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    database = await createTestSchema("runnel_ingest");
    server = await startTestServer({ DATABASE_URL: database.databaseUrl });
    key = (await createUser(server, "ingest")).key;
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it("fails only that request: every good one sent with it is acknowledged and stored once", async () => {
    // PostgreSQL's text columns refuse the NUL character, which this source puts in one event's summary.
    const source = await deploySource(server, key, { component_code: EMITTER });
    const requests = Array.from({ length: 100 }, (_, n) => send(source.endpoint_url, JSON.stringify({ n })));
    requests.splice(50, 0, send(source.endpoint_url, JSON.stringify({ n: -1, bad: true })));
    const answers = await Promise.all(requests);
    const bad = answers.splice(50, 1)[0]!;
    expect(bad.status).toBeGreaterThanOrEqual(500);
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    const events = await eventsOf(server, key, source.id);
    expect(events.map((event: any) => event.event.n).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect((await call(server.url, "GET", "/healthz")).status).toBe(200);
  });
});
