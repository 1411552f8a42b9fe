import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deploySource } from "../helpers/sources.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { catalogStep, codeOf, runAction, runOnce, saveActionWorkflow } from "./catalog-b-harness.js";

/**
 * The catalog's data_stores components: each action run as a workflow step
 * against the user's real data store (read back through /v1/data_stores),
 * and the "new or changed key" source deployed with a timer and run by hand.
 */

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "keeper")).key;
});
afterAll(() => server.close());

const A = (slug: string) => `data_stores/actions/${slug}/${slug}.mjs`;

async function record(store: string, recordKey: string): Promise<{ status: number; value?: unknown; expires_at?: unknown }> {
  const read = await call(server.url, "GET", `/v1/data_stores/${store}/records/${encodeURIComponent(recordKey)}`, { key });
  return { status: read.status, ...(read.status === 200 ? read.body.data : {}) };
}

async function put(store: string, recordKey: string, value: unknown): Promise<void> {
  const written = await call(server.url, "PUT", `/v1/data_stores/${store}/records/${encodeURIComponent(recordKey)}`, { key, json: { value } });
  expect(written.status).toBe(200);
}

async function stepReturn(slug: string, props: Record<string, unknown>, event: unknown = {}): Promise<{ value: any; exports: any }> {
  const run = await runAction(server, key, A(slug), props, event);
  expect(run.status, JSON.stringify(run.error)).toBe("success");
  return { value: run.steps[0].$return_value, exports: run.steps[0].exports };
}

async function stepError(slug: string, props: Record<string, unknown>, event: unknown = {}): Promise<string> {
  const run = await runAction(server, key, A(slug), props, event);
  expect(run.status).toBe("error");
  return run.error.msg;
}

describe.concurrent("data_stores actions (each test its own store)", () => {
  it("add or update: adds, then replaces, with a TTL when given", async () => {
    const added = await stepReturn("add-update-record", { dataStore: "s-add", key: "order-{{steps.trigger.event.id}}", value: "{{steps.trigger.event.order}}" }, { id: 42, order: { total: 9.5 } });
    expect(added.value).toEqual({ key: "order-42", value: { total: 9.5 }, created: true });
    expect(await record("s-add", "order-42")).toMatchObject({ status: 200, value: { total: 9.5 }, expires_at: null });
    const updated = await stepReturn("add-update-record", { dataStore: "s-add", key: "order-42", value: [1, 2], ttl: 3600 });
    expect(updated.value.created).toBe(false);
    const stored = await record("s-add", "order-42");
    expect(stored.value).toEqual([1, 2]);
    expect(stored.expires_at).not.toBeNull();
  });

  it("add or update: a missing value, an object or empty text as key and a TTL over a year are named", async () => {
    expect(await stepError("add-update-record", { dataStore: "s-add-bad", key: "k", value: "{{steps.trigger.event.nothing}}" })).toContain('prop "value" is {{steps.trigger.event.nothing}}, which gave nothing');
    expect(await stepError("add-update-record", { dataStore: "s-add-bad", key: "{{steps.trigger.event.k}}", value: 1 }, { k: { a: 1 } })).toContain('prop "key" is {{steps.trigger.event.k}}, which gave an object');
    expect(await stepError("add-update-record", { dataStore: "s-add-bad", key: "{{steps.trigger.event.k}}", value: 1 }, { k: "" })).toContain('Prop "key" must be non-empty text; got empty text');
    const refused = await saveActionWorkflow(server, key, A("add-update-record"), { dataStore: "s-add-bad", key: "k", value: 1, ttl: 400 * 24 * 3600 });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.error)).toContain("ttl");
    const noStore = await saveActionWorkflow(server, key, A("add-update-record"), { key: "k", value: 1 });
    expect(noStore.status).toBe(400);
    expect(JSON.stringify(noStore.body.error)).toContain("dataStore");
  });

  it("get or create: finds a record; a missing one returns null, or stores and returns the default", async () => {
    await put("s-get", "there", { hello: "world" });
    expect(await stepReturn("get-record-or-create", { dataStore: "s-get", key: "there" })).toMatchObject({ value: { hello: "world" }, exports: { found: true } });
    expect(await stepReturn("get-record-or-create", { dataStore: "s-get", key: "missing" })).toMatchObject({ value: null, exports: { found: false } });
    expect((await record("s-get", "missing")).status).toBe(404);
    expect(await stepReturn("get-record-or-create", { dataStore: "s-get", key: "fresh", value: { count: 0 } })).toMatchObject({ value: { count: 0 }, exports: { found: false } });
    expect(await record("s-get", "fresh")).toMatchObject({ status: 200, value: { count: 0 } });
    // The hosted registry's configurations say whether to create: "No" stores nothing even with a value.
    expect(await stepReturn("get-record-or-create", { dataStore: "s-get", key: "kept-out", value: 1, addRecordIfNotFound: "No" })).toMatchObject({ value: null, exports: { found: false } });
    expect((await record("s-get", "kept-out")).status).toBe(404);
    expect(await stepReturn("get-record-or-create", { dataStore: "s-get", key: "made", value: 2, addRecordIfNotFound: "Yes" })).toMatchObject({ value: 2 });
  });

  it("delete: removes a record and says so; a missing one is not an error", async () => {
    await put("s-del", "gone", 1);
    expect((await stepReturn("delete-single-record", { dataStore: "s-del", key: "gone" })).value).toEqual({ key: "gone", deleted: true });
    expect((await record("s-del", "gone")).status).toBe(404);
    expect((await stepReturn("delete-single-record", { dataStore: "s-del", key: "gone" })).value).toEqual({ key: "gone", deleted: false });
  });

  it("list keys: every key sorted, or those with a prefix", async () => {
    for (const name of ["order:2", "order:1", "user:1"]) await put("s-list", name, true);
    expect((await stepReturn("list-keys", { dataStore: "s-list" })).value).toEqual(["order:1", "order:2", "user:1"]);
    expect((await stepReturn("list-keys", { dataStore: "s-list", prefix: "order:" })).value).toEqual(["order:1", "order:2"]);
    expect((await stepReturn("list-keys", { dataStore: "s-list-empty" })).value).toEqual([]);
  });

  it("increment: from 0, by a step, down, one run after another; a non-number record is named", async () => {
    expect((await stepReturn("increment-counter", { dataStore: "s-count", key: "hits" })).value).toBe(1);
    expect((await stepReturn("increment-counter", { dataStore: "s-count", key: "hits", by: 5 })).value).toBe(6);
    expect((await stepReturn("increment-counter", { dataStore: "s-count", key: "hits", by: -2 })).value).toBe(4);
    const saved = await saveActionWorkflow(server, key, A("increment-counter"), { dataStore: "s-count", key: "runs" });
    for (let n = 1; n <= 3; n++) expect((await runOnce(server, key, saved.body.data.id, {})).steps[0].$return_value).toBe(n);
    expect((await record("s-count", "runs")).value).toBe(3);
    await put("s-count", "word", "seven");
    expect(await stepError("increment-counter", { dataStore: "s-count", key: "word" })).toContain('The record "word" holds a string, not a number');
    const refused = await saveActionWorkflow(server, key, A("increment-counter"), { dataStore: "s-count", key: "x", by: 0.5 });
    expect(refused.status).toBe(400);
  });

  it("append: starts a list, appends, keeps the newest items; a record that is not a list is named", async () => {
    expect((await stepReturn("append-to-record", { dataStore: "s-append", key: "log", value: "{{steps.trigger.event}}" }, { n: 1 })).value).toEqual([{ n: 1 }]);
    expect((await stepReturn("append-to-record", { dataStore: "s-append", key: "log", value: 2 })).value).toEqual([{ n: 1 }, 2]);
    expect((await stepReturn("append-to-record", { dataStore: "s-append", key: "log", value: 3, maxLength: 2 })).value).toEqual([2, 3]);
    expect((await record("s-append", "log")).value).toEqual([2, 3]);
    await put("s-append", "scalar", 5);
    expect(await stepError("append-to-record", { dataStore: "s-append", key: "scalar", value: 1 })).toContain('The record "scalar" holds a number, not a list');
  });

  it("chains in one workflow: get-or-create, then increment the same key, then list", async () => {
    const created = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: {
        name: "Chain",
        steps: [
          await catalogStep(A("get-record-or-create"), { dataStore: "s-chain", key: "n", value: 10 }, "get"),
          await catalogStep(A("increment-counter"), { dataStore: "s-chain", key: "n", by: "{{steps.trigger.event.by}}" }, "bump"),
          await catalogStep(A("list-keys"), { dataStore: "s-chain" }, "keys"),
        ],
      },
    });
    expect(created.status).toBe(200);
    const run = await runOnce(server, key, created.body.data.id, { by: 3 });
    expect(run.steps.map((step: any) => step.$return_value)).toEqual([10, 13, ["n"]]);
  });
});

describe("data_stores source: new or changed key", () => {
  const SOURCE = "data_stores/sources/new-or-changed-key/new-or-changed-key.mjs";

  async function check(sourceId: string): Promise<any[]> {
    const ran = await call(server.url, "POST", `/v1/sources/${sourceId}/run`, { key });
    expect(ran.status).toBe(200);
    expect(ran.body.data.ok, JSON.stringify(ran.body.data.error)).toBe(true);
    return ran.body.data.events.map((event: any) => ({ ...event.event, summary: event.metadata?.summary ?? event.summary }));
  }

  it("emits one event per new or changed key since the last check, nothing for unchanged ones, and ignores records there at deploy", async () => {
    await put("watched", "before", 1);
    const source = await deploySource(server, key, { component_code: await codeOf(SOURCE), name: "watch", configured_props: { dataStore: "watched", timer: { intervalSeconds: 3600 } } });
    expect(await check(source.id)).toEqual([]);
    await put("watched", "a", { v: 1 });
    await put("watched", "before", 2);
    const first = await check(source.id);
    expect(first.map(({ key: k, value, change }) => ({ key: k, value, change }))).toEqual([
      { key: "a", value: { v: 1 }, change: "new" },
      { key: "before", value: 2, change: "changed" },
    ]);
    expect(first[0].summary).toBe('New key "a"');
    expect(await check(source.id)).toEqual([]);
    await put("watched", "a", { v: 2 });
    expect((await check(source.id)).map(({ key: k, change }) => `${k}:${change}`)).toEqual(["a:changed"]);
    // A key deleted and written again is new once more.
    expect((await call(server.url, "DELETE", "/v1/data_stores/watched/records/a", { key })).status).toBe(204);
    expect(await check(source.id)).toEqual([]);
    await put("watched", "a", { v: 2 });
    expect((await check(source.id)).map(({ key: k, change }) => `${k}:${change}`)).toEqual(["a:new"]);
  });

  it("with emitExisting, emits the records there at deploy; with a prefix, follows only those keys", async () => {
    await put("watched-2", "order:1", "x");
    await put("watched-2", "user:1", "y");
    const source = await deploySource(server, key, {
      component_code: await codeOf(SOURCE),
      name: "watch-orders",
      configured_props: { dataStore: "watched-2", timer: { intervalSeconds: 3600 }, prefix: "order:", emitExisting: true },
    });
    expect((await check(source.id)).map(({ key: k, change }) => `${k}:${change}`)).toEqual(["order:1:new"]);
    await put("watched-2", "user:2", "z");
    await put("watched-2", "order:2", "w");
    expect((await check(source.id)).map(({ key: k }) => k)).toEqual(["order:2"]);
  });

  it("refuses a deploy without a store, or with a timer of the wrong form, naming the prop", async () => {
    const noStore = await call(server.url, "POST", "/v1/sources", { key, json: { component_code: await codeOf(SOURCE), name: "bad-watch", configured_props: {} } });
    expect(noStore.status).toBe(400);
    expect(JSON.stringify(noStore.body.error)).toContain("dataStore");
    const badTimer = await call(server.url, "POST", "/v1/sources", { key, json: { component_code: await codeOf(SOURCE), name: "bad-watch", configured_props: { dataStore: "w", timer: { cron: "61 * * * *" } } } });
    expect(badTimer.status).toBe(400);
    expect(JSON.stringify(badTimer.body.error)).toContain("timer");
  });
});
