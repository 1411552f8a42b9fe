import { SqliteDatabaseClass as Database } from "../../src/store/sqlite/sqlite-binding.js";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deploySource } from "../helpers/sources.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, runsOf, waitFor } from "./helpers.js";

/**
 * Key-value state in workflows: each step's own `$.service.db` (kept across
 * runs and redeploys of the step, gone with the workflow), and `data_store`
 * props (the user's named stores, shared by sources and steps), with the
 * /v1/data_stores API, TTLs, limits and isolation between users. Real server,
 * real runners, real SQLite.
 */

let server: TestServer;
let key: string;
let otherKey: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "keeper")).key;
  otherKey = (await createUser(server, "stranger")).key;
});
afterAll(() => server.close());

async function post(url: string, body: unknown): Promise<number> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await response.text();
  return response.status;
}

/** Triggers the workflow and waits for its run number `count`; returns that run (newest). */
async function runOnce(workflow: any, body: unknown, count: number, as = key): Promise<any> {
  expect(await post(workflow.trigger.endpoint_url, body)).toBe(200);
  const runs = await waitFor(() => runsOf(server, as, workflow.id), (runs) => runs.length >= count, `run ${count}`);
  return runs[0];
}

function stepStoreRows(workflowId: string): Array<{ step_id: string; key: string; value: string }> {
  const database = new Database(join(server.dataDir, "runnel.sqlite"), { readonly: true });
  try {
    return database.prepare("SELECT step_id, key, value FROM step_store_entries WHERE workflow_id = ? ORDER BY key").all(workflowId) as any[];
  } finally {
    database.close();
  }
}

const COUNTER = (label: string) => `export default defineComponent({
  props: { db: "$.service.db" },
  async run({ steps }) {
    const count = (this.db.get("count") ?? 0) + 1;
    this.db.set("count", count);
    return "${label}:" + count;
  },
})`;

describe("$.service.db in a workflow step", () => {
  it("keeps the step's state across runs and across a redeploy of the same step, keeps steps apart, and loses it with the workflow", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Counter",
      trigger: { type: "http" },
      steps: [
        { name: "count", code: COUNTER("v1") },
        { name: "other", code: COUNTER("other") },
      ],
    });
    expect((await runOnce(workflow, {}, 1)).steps.map((step: any) => step.$return_value)).toEqual(["v1:1", "other:1"]);
    expect((await runOnce(workflow, {}, 2)).steps.map((step: any) => step.$return_value)).toEqual(["v1:2", "other:2"]);

    // New code for the same step (same name): its store stays; the step removed takes its store with it.
    const updated = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: [{ name: "count", code: COUNTER("v2") }] } });
    expect(updated.status).toBe(200);
    expect((await runOnce(workflow, {}, 3)).steps.map((step: any) => step.$return_value)).toEqual(["v2:3"]);
    const countStep = updated.body.data.steps[0].id;
    expect(stepStoreRows(workflow.id)).toEqual([{ step_id: countStep, key: "count", value: "3" }]);

    expect((await call(server.url, "DELETE", `/v1/workflows/${workflow.id}`, { key })).status).toBe(204);
    expect(stepStoreRows(workflow.id)).toEqual([]);
  });

  it("merges concurrent runs key by key: each run's keys stay (per-key last writer wins)", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Concurrent",
      trigger: { type: "http" },
      steps: [{ name: "mark", code: `export default defineComponent({ props: { db: "$.service.db" }, async run({ steps }) { this.db.set("run-" + steps.trigger.event.body.n, true); this.db.set("last", steps.trigger.event.body.n); } })` }],
    });
    // Sent together, so that runs of one batch start from the same store.
    await Promise.all([1, 2, 3, 4, 5, 6].map((n) => post(workflow.trigger.endpoint_url, { n })));
    await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 6, "six runs");
    const keys = stepStoreRows(workflow.id).map((row) => row.key);
    expect(keys).toEqual(["last", "run-1", "run-2", "run-3", "run-4", "run-5", "run-6"]);
  });

  it("fails a step that would store more than 60 KB, naming the limit, and keeps what was stored before", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Greedy",
      trigger: { type: "http" },
      steps: [{ name: "fill", code: `export default defineComponent({ props: { db: "$.service.db" }, async run({ steps }) { this.db.set("size", steps.trigger.event.body.size); this.db.set("pad", "x".repeat(steps.trigger.event.body.size)); } })` }],
    });
    expect((await runOnce(workflow, { size: 10 }, 1)).status).toBe("success");
    const failed = await runOnce(workflow, { size: 70 * 1024 }, 2);
    expect(failed.status).toBe("error");
    expect(failed.error.msg).toContain("60 KB");
    // The set before the failing one is kept, as a failed source call's are; the pad over the limit is not.
    const rows = Object.fromEntries(stepStoreRows(workflow.id).map((row) => [row.key, JSON.parse(row.value)]));
    expect(rows).toEqual({ size: 70 * 1024, pad: "x".repeat(10) });
  });
});

describe("data_store props and /v1/data_stores", () => {
  const SOURCE = `export default {
    name: "Remember", version: "0.1.0",
    props: { http: "$.interface.http", store: { type: "data_store" } },
    async run(event) {
      await this.store.set("from-source", event.body.n);
      this.$emit({ n: event.body.n });
    },
  }`;
  const READER = `export default defineComponent({
    props: { store: { type: "data_store" } },
    async run({ steps }) {
      const seen = await this.store.get("from-source");
      await this.store.set("from-step", { seen });
      return { seen, has: await this.store.has("from-source"), missing: (await this.store.get("nothing")) === undefined, keys: (await this.store.keys()).sort(), entries: await this.store.entries() };
    },
  })`;

  it("is one store for a source and a step of the same user, listed and readable through the API", async () => {
    const source = await deploySource(server, key, { component_code: SOURCE, name: "remember", configured_props: { store: "shared" } });
    const workflow = await createWorkflow(server, key, { name: "Reader", trigger: { source_id: source.id }, steps: [{ name: "read", code: READER, props: { store: "shared" } }] });
    expect(await post(source.configured_props.http.endpoint_url, { n: 7 })).toBe(200);
    const [run] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
    expect(run.status).toBe("success");
    expect(run.steps[0].$return_value).toEqual({ seen: 7, has: true, missing: true, keys: ["from-source", "from-step"], entries: [["from-source", 7], ["from-step", { seen: 7 }]] });

    const listed = await call(server.url, "GET", "/v1/data_stores", { key });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ name: "shared", key_count: 2 })]);
    const records = await call(server.url, "GET", "/v1/data_stores/shared/records?limit=1", { key });
    expect(records.body.page_info).toMatchObject({ total_count: 2, count: 1, end_cursor: "from-source" });
    expect(records.body.data).toEqual([expect.objectContaining({ key: "from-source", value: 7, expires_at: null })]);
    const next = await call(server.url, "GET", "/v1/data_stores/shared/records?after=from-source", { key });
    expect(next.body.data).toEqual([expect.objectContaining({ key: "from-step", value: { seen: 7 } })]);

    // Edited through the API, seen by the next run.
    expect((await call(server.url, "PUT", "/v1/data_stores/shared/records/from-source", { key, json: { value: 99 } })).status).toBe(200);
    expect(await post(source.configured_props.http.endpoint_url, { n: 8 })).toBe(200);
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 2, "the second run");
    expect(runs[0].steps[0].$return_value.seen).toBe(8);
    expect((await call(server.url, "GET", "/v1/data_stores/shared/records/from-step", { key })).body.data.value).toEqual({ seen: 8 });
  });

  it("honours a TTL on read, from a step and from the API", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Expiring",
      trigger: { type: "http" },
      steps: [
        {
          name: "ttl",
          props: { store: "expiring" },
          code: `export default defineComponent({
            props: { store: { type: "data_store" } },
            async run({ steps }) {
              if (steps.trigger.event.body.write) await this.store.set("short", "soon gone", { ttl: 1 });
              return { value: (await this.store.get("short")) ?? "absent", has: await this.store.has("short"), keys: await this.store.keys() };
            },
          })`,
        },
      ],
    });
    expect((await runOnce(workflow, { write: true }, 1)).steps[0].$return_value).toEqual({ value: "soon gone", has: true, keys: ["short"] });
    const record = await call(server.url, "GET", "/v1/data_stores/expiring/records/short", { key });
    expect(record.body.data.expires_at).toBeGreaterThan(Date.now() / 1000 - 1);
    expect((await call(server.url, "PUT", "/v1/data_stores/expiring/records/api", { key, json: { value: 1, ttl: 1 } })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect((await runOnce(workflow, {}, 2)).steps[0].$return_value).toEqual({ value: "absent", has: false, keys: [] });
    expect((await call(server.url, "GET", "/v1/data_stores/expiring/records/short", { key })).status).toBe(404);
    expect((await call(server.url, "GET", "/v1/data_stores/expiring/records/api", { key })).status).toBe(404);
    expect((await call(server.url, "GET", "/v1/data_stores", { key })).body.data).toContainEqual(expect.objectContaining({ name: "expiring", key_count: 0 }));
  });

  it("refuses values, keys and TTLs past the limits with errors that say what to do, from a step and from the API", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Oversized",
      trigger: { type: "http" },
      steps: [{ name: "big", props: { store: "limits" }, code: `export default defineComponent({ props: { store: { type: "data_store" } }, async run() { await this.store.set("big", "x".repeat(61 * 1024)); } })` }],
    });
    const failed = await runOnce(workflow, {}, 1);
    expect(failed.status).toBe("error");
    expect(failed.error.msg).toMatch(/this\.store\.set\(\): a value may be at most 60 KB/);

    const big = await call(server.url, "PUT", "/v1/data_stores/limits/records/big", { key, json: { value: "x".repeat(61 * 1024) } });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toMatch(/at most 60 KB/);
    const longKey = await call(server.url, "PUT", `/v1/data_stores/limits/records/${"k".repeat(1025)}`, { key, json: { value: 1 } });
    expect(longKey.status).toBe(400);
    expect(longKey.body.error.message).toMatch(/at most 1024 bytes/);
    const badTtl = await call(server.url, "PUT", "/v1/data_stores/limits/records/t", { key, json: { value: 1, ttl: 400 * 24 * 3600 } });
    expect(badTtl.status).toBe(400);
    expect(badTtl.body.error.message).toMatch(/ttl may be at most/);
  });

  it("stops an owner's stores at 10 MB in all, with a 413 that says what to do", async () => {
    const { key: filler } = await createUser(server, "filler");
    const value = "y".repeat(60 * 1024 - 10);
    let status = 200;
    let written = 0;
    while (status === 200 && written < 200) {
      const answer = await call(server.url, "PUT", `/v1/data_stores/${written % 2 ? "a" : "b"}/records/k${written}`, { key: filler, json: { value } });
      status = answer.status;
      if (status === 413) expect(answer.body.error.message).toMatch(/10 MB one user's stores may hold together.*Delete records/);
      else written += 1;
    }
    expect(status).toBe(413);
    // 10 MB of about 60 KB records: 170 fit.
    expect(written).toBe(170);
    // Deleting makes room again.
    expect((await call(server.url, "DELETE", "/v1/data_stores/a/records/k1", { key: filler })).status).toBe(204);
    expect((await call(server.url, "PUT", "/v1/data_stores/a/records/again", { key: filler, json: { value } })).status).toBe(200);
  });

  it("never shows one user's store to another: the same name is another store, and the API answers 404", async () => {
    expect((await call(server.url, "PUT", "/v1/data_stores/private/records/secret", { key, json: { value: "mine" } })).status).toBe(200);
    const listed = await call(server.url, "GET", "/v1/data_stores", { key: otherKey });
    expect(listed.body.data.map((store: any) => store.name)).not.toContain("private");
    for (const [method, path] of [
      ["GET", "/v1/data_stores/private/records"],
      ["GET", "/v1/data_stores/private/records/secret"],
      ["DELETE", "/v1/data_stores/private/records/secret"],
      ["DELETE", "/v1/data_stores/private"],
    ] as const) {
      expect((await call(server.url, method, path, { key: otherKey })).status, `${method} ${path}`).toBe(404);
    }
    // The stranger's step naming "private" gets a store of the stranger's own.
    const workflow = await createWorkflow(server, otherKey, {
      name: "Snoop",
      trigger: { type: "http" },
      steps: [{ name: "peek", props: { store: "private" }, code: `export default defineComponent({ props: { store: { type: "data_store" } }, async run() { const before = await this.store.get("secret"); await this.store.set("secret", "theirs"); return before; } })` }],
    });
    expect((await runOnce(workflow, {}, 1, otherKey)).steps[0].$return_value).toBeNull();
    expect((await call(server.url, "GET", "/v1/data_stores/private/records/secret", { key })).body.data.value).toBe("mine");
    expect((await call(server.url, "GET", "/v1/data_stores/private/records/secret", { key: otherKey })).body.data.value).toBe("theirs");

    // Deleting one's own store leaves the other's.
    expect((await call(server.url, "DELETE", "/v1/data_stores/private", { key: otherKey })).status).toBe(204);
    expect((await call(server.url, "GET", "/v1/data_stores/private/records/secret", { key })).body.data.value).toBe("mine");
  });
});
