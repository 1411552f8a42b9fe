import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { createTestSchema } from "../helpers/postgres.js";

/**
 * Store.exclusively: work under one name never overlaps across the
 * installation's processes (here two PostgreSQL stores, each with its own
 * pool, as two processes have), work under another name goes on meanwhile,
 * and a work that fails releases its turn.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `work`'s span in `spans` under store.exclusively(name). */
function timed(store: Store, name: string, spans: Array<{ name: string; from: number; to: number }>, fail = false) {
  return store.exclusively(name, async () => {
    const from = performance.now();
    await sleep(80);
    spans.push({ name, from, to: performance.now() });
    if (fail) throw new Error("the work failed");
    return name;
  });
}

function overlap(a: { from: number; to: number }, b: { from: number; to: number }): boolean {
  return a.from < b.to && b.from < a.to;
}

describe("Store.exclusively across two PostgreSQL processes", () => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let first: Store;
  let second: Store;

  beforeAll(async () => {
    schema = await createTestSchema("runnel_exclusively");
    first = createPostgresStore({ connectionString: schema.databaseUrl, schema: schema.schema, maxConnections: 3 });
    second = createPostgresStore({ connectionString: schema.databaseUrl, schema: schema.schema, maxConnections: 3 });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await schema?.drop();
  });

  it("runs one name's work one at a time across processes, another name's beside it, and releases a failed work's turn", async () => {
    const spans: Array<{ name: string; from: number; to: number }> = [];
    const settled = await Promise.allSettled([timed(first, "reconcile", spans, true), timed(second, "reconcile", spans), timed(first, "reconcile", spans), timed(second, "other", spans)]);
    expect(settled.map((outcome) => outcome.status)).toEqual(["rejected", "fulfilled", "fulfilled", "fulfilled"]);
    const same = spans.filter((span) => span.name === "reconcile");
    expect(same).toHaveLength(3);
    for (const [index, span] of same.entries()) for (const other of same.slice(index + 1)) expect(overlap(span, other)).toBe(false);
    // The other name did not wait for them: it started before the last of them ended.
    const other = spans.find((span) => span.name === "other")!;
    expect(other.from).toBeLessThan(Math.max(...same.map((span) => span.to)));
  });
});

describe("Store.exclusively on SQLite (one process)", () => {
  let dir: string;
  let store: Store;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "runnel-exclusively-"));
    store = createSqliteStore({ file: join(dir, "runnel.sqlite") });
  });
  afterAll(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs one name's work one at a time, in order, another name's beside it, and a failed work does not stop the next", async () => {
    const spans: Array<{ name: string; from: number; to: number }> = [];
    const settled = await Promise.allSettled([timed(store, "reconcile", spans, true), timed(store, "reconcile", spans), timed(store, "other", spans)]);
    expect(settled.map((outcome) => outcome.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
    const [a, b] = spans.filter((span) => span.name === "reconcile");
    expect(overlap(a!, b!)).toBe(false);
    expect(a!.to).toBeLessThanOrEqual(b!.from);
    expect(spans.find((span) => span.name === "other")!.from).toBeLessThan(b!.to);
  });
});
