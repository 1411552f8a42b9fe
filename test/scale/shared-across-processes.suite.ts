import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerProcess } from "../../src/chaos/server-process.js";
import { createClusterFixture, send } from "../helpers/test-cluster.js";
import { call } from "../helpers/server.js";

/**
 * What must agree between processes (issue 18), on real processes of the
 * built binary (`npm run build` first): 2 api + 1 worker on one PostgreSQL
 * schema, the queue on Redis, then on PostgreSQL alone. The per-key rate
 * limit is the installation's, and a change made through api A is what api
 * B and the worker run next, not what they had cached for a second.
 */

/** Small enough to reach in a test; the admin key's own calls stay well under it. */
const LIMIT = 50;

interface Cluster {
  apiA: ServerProcess;
  apiB: ServerProcess;
  worker: ServerProcess;
  adminKey: string;
  stop(): Promise<void>;
}

async function startCluster(queue: "redis" | "postgres", prefix: string): Promise<Cluster> {
  const fixture = await createClusterFixture(queue, prefix, { RUNNEL_RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  // api A first: it makes the admin and its key; the others find both in the database.
  try {
    const apiA = await fixture.start("api");
    const adminKey = await fixture.adminKeyOf(apiA.dataDir);
    const [apiB, worker] = await Promise.all([fixture.start("api"), fixture.start("worker")]);
    return { apiA: apiA.server, apiB: apiB.server, worker: worker.server, adminKey, stop: fixture.stop };
  } catch (error) {
    await fixture.stop().catch(() => undefined);
    throw error;
  }
}

/** The same endpoint, reached through another api process. */
const through = (server: ServerProcess, endpointUrl: string) => `${server.url}${new URL(endpointUrl).pathname}`;

/**
 * The endpoint's status once it is `wanted`, asked again for up to 300 ms:
 * api A answers once its "changed" message is on the wire and back to
 * itself, and api B, busy on a loaded machine, may read its copy a moment
 * later. Well under B's cache of a second: without the message, the
 * change would show only after that.
 */
const statusWithin = async (url: string, wanted: number): Promise<number> => {
  const deadline = Date.now() + 300;
  for (;;) {
    const { status } = await postJson(url);
    if (status === wanted || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

const postJson = async (url: string, body: unknown = {}) => {
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await answer.text();
  return { status: answer.status, body: text.startsWith("{") ? JSON.parse(text) : text };
};

/** An HTTP workflow whose one step answers the caller with its version: the run happens on the worker. */
const versionedWorkflowStep = (version: string) => ({
  name: "reply",
  code: `export default defineComponent({ async run({ $ }) { await $.respond({ status: 200, body: { version: ${JSON.stringify(version)} } }); } })`,
});

/** An HTTP source that answers its caller with its version itself: it runs in the api process that takes the request. */
const versionedSource = (version: string) =>
  `export default { name: "Versioned", version: "0.1.0", props: { http: { type: "$.interface.http", customResponse: true } }, async run() { this.http.respond({ status: 200, body: { version: ${JSON.stringify(version)} } }); } };`;

/** A timer source that emits every second: it runs on the worker only. */
const TICKER = `export default { name: "Ticker", version: "0.1.0", props: { timer: { type: "$.interface.timer", default: { intervalSeconds: 1 } } }, async run(event) { this.$emit({ tick: event.timestamp }); } };`;

function describeSharedState(cluster: () => Cluster) {
  it(`counts a key's requests once for the installation: alternating between two api processes, request ${LIMIT + 1} is refused`, async () => {
    const { apiA, apiB, adminKey } = cluster();
    // A key of its own: its budget is untouched by the rest of the test.
    const key = ((await send(apiA.url, "POST", "/v1/users/me/api_keys", adminKey, { name: `limit-${randomBytes(3).toString("hex")}` })) as { key: string }).key;
    const remaining: number[] = [];
    for (let n = 0; n < LIMIT; n += 1) {
      const answer = await call(n % 2 === 0 ? apiA.url : apiB.url, "GET", "/v1/users/me", { key });
      expect(answer.status, `request ${n + 1}`).toBe(200);
      remaining.push(Number(answer.headers.get("x-ratelimit-remaining")));
    }
    // One count: each request, whichever process took it, takes one from the same budget.
    expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, n) => LIMIT - n - 1));
    for (const server of [apiB, apiA]) {
      const refused = await call(server.url, "GET", "/v1/users/me", { key });
      expect(refused.status).toBe(429);
      expect(refused.body.error.message).toMatch(new RegExp(`this key may make ${LIMIT} a minute\\. Try again in`));
      expect(refused.body.error.details.retry_after_seconds).toBeGreaterThan(0);
    }
    // The admin key's budget is its own.
    expect((await call(apiB.url, "GET", "/v1/users/me", { key: adminKey })).status).toBe(200);
  }, 60_000);

  it("runs a workflow updated through api A with its new code on the worker at once (the worker's cached workflow is forgotten)", async () => {
    const { apiA, apiB, adminKey } = cluster();
    const workflow = await send(apiA.url, "POST", "/v1/workflows", adminKey, { name: `versioned-${randomBytes(3).toString("hex")}`, trigger: { type: "http" }, respond: "workflow", steps: [versionedWorkflowStep("v0")] });
    const endpoint = through(apiB, workflow.trigger.endpoint_url as string);
    expect(await postJson(endpoint)).toEqual({ status: 200, body: { version: "v0" } });
    for (const version of ["v1", "v2", "v3"]) {
      // Just run: the worker has read the workflow within the last second.
      expect((await postJson(endpoint)).body).toEqual({ version: version === "v1" ? "v0" : `v${Number(version.slice(1)) - 1}` });
      await send(apiA.url, "PUT", `/v1/workflows/${workflow.id}`, adminKey, { steps: [versionedWorkflowStep(version)] });
      // At once, through the other api process: the worker runs the new code, not what it cached.
      expect(await postJson(endpoint)).toEqual({ status: 200, body: { version } });
    }
    await call(apiA.url, "DELETE", `/v1/workflows/${workflow.id}`, { key: adminKey });
  }, 90_000);

  it("runs a source updated through api A with its new code on api B at once (B's endpoint and source rows are forgotten)", async () => {
    const { apiA, apiB, adminKey } = cluster();
    const source = await send(apiA.url, "POST", "/v1/sources", adminKey, { component_code: versionedSource("v0"), name: `versioned-${randomBytes(3).toString("hex")}` });
    const endpoint = through(apiB, source.endpoint_url as string);
    expect(await postJson(endpoint)).toEqual({ status: 200, body: { version: "v0" } });
    for (const version of ["v1", "v2"]) {
      expect((await postJson(endpoint)).status).toBe(200);
      await send(apiA.url, "PUT", `/v1/sources/${source.id}`, adminKey, { component_code: versionedSource(version) });
      expect(await postJson(endpoint)).toEqual({ status: 200, body: { version } });
    }
    await call(apiA.url, "DELETE", `/v1/sources/${source.id}`, { key: adminKey });
  }, 90_000);

  it("stops taking a source's events on api B as soon as it is deactivated, then deleted, through api A", async () => {
    const { apiA, apiB, adminKey } = cluster();
    const source = await send(apiA.url, "POST", "/v1/sources", adminKey, { component_code: versionedSource("v0"), name: `paused-${randomBytes(3).toString("hex")}` });
    const endpoint = through(apiB, source.endpoint_url as string);
    expect((await postJson(endpoint)).status).toBe(200);
    expect((await postJson(endpoint)).status).toBe(200);
    await send(apiA.url, "PUT", `/v1/sources/${source.id}`, adminKey, { active: false });
    expect(await statusWithin(endpoint, 404)).toBe(404);
    await send(apiA.url, "PUT", `/v1/sources/${source.id}`, adminKey, { active: true });
    expect(await statusWithin(endpoint, 200)).toBe(200);
    expect((await call(apiA.url, "DELETE", `/v1/sources/${source.id}`, { key: adminKey })).status).toBe(204);
    expect(await statusWithin(endpoint, 404)).toBe(404);
  }, 90_000);

  it("stops running a timer source on the worker once it is deactivated through api A", async () => {
    const { apiA, apiB, adminKey } = cluster();
    const source = await send(apiA.url, "POST", "/v1/sources", adminKey, { component_code: TICKER, name: `ticker-${randomBytes(3).toString("hex")}`, configured_props: { timer: { intervalSeconds: 1 } } });
    const count = async () => ((await call(apiB.url, "GET", `/v1/sources/${source.id}/event_summaries?limit=100`, { key: adminKey })).body.data as unknown[]).length;
    const until = Date.now() + 30_000;
    while ((await count()) < 2) {
      if (Date.now() > until) throw new Error("the worker ran no ticks");
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    await send(apiA.url, "PUT", `/v1/sources/${source.id}`, adminKey, { active: false });
    // A tick already running when the change landed may still commit; none starts after it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const settled = await count();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await count()).toBe(settled);
    await call(apiA.url, "DELETE", `/v1/sources/${source.id}`, { key: adminKey });
  }, 90_000);
}

describe("2 api + 1 worker, queue on Redis", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster("redis", "shared_redis");
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  describeSharedState(() => cluster);
});

describe("2 api + 1 worker, PostgreSQL alone", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster("postgres", "shared_pg");
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  describeSharedState(() => cluster);
});
