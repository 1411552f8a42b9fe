import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/server.js";
import { expectBystanderServed, respondingRunBody, startHostileHarness, type HostileHarness } from "./harness.js";

/**
 * Exhausting the machine through a real server: memory outside the heap,
 * CPU in a loop, and asking for more than the admin allows. The attacker's
 * call is stopped with a clear error; the bystander is served meanwhile.
 */
const hog = (body: string) => respondingRunBody(`${body} this.http.respond({ status: 200, body: "survived" });`, "hog");

let h: HostileHarness;
beforeAll(async () => {
  h = await startHostileHarness();
});
afterAll(() => h?.close());

describe("resource exhaustion", () => {
  it("Buffers far past the heap limit: OutOfMemory naming the whole runner's limit, the bystander served", async () => {
    const source = await h.deploySource(hog(`const held = []; for (let i = 0; i < 256; i++) held.push(Buffer.alloc(16 * 1024 * 1024, 1));`), {
      memory_mb: 128,
      // Long enough that the memory limit, not the clock, stops it on a loaded machine (a run of CI once hit the time limit first).
      timeout_seconds: 30,
    });
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(source));
    expect(outcome.status).toBe(502);
    expect(JSON.stringify(outcome.body)).toContain("more than its memory limit of 256 MB (heap, Buffers and native memory together");
    expectBystanderServed(bystander);
  });

  it("a busy loop: stopped at the source's time limit, the bystander served meanwhile", async () => {
    const source = await h.deploySource(hog(`for (;;) {}`), { timeout_seconds: 2 });
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(source));
    expect(outcome.status).toBe(502);
    expect(JSON.stringify(outcome.body)).toContain("did not finish within its time limit of 2000 ms");
    expectBystanderServed(bystander);
    expect(bystander.length).toBeGreaterThan(5);
  });

  it("refuses memory_mb and timeout_seconds over the admin's ceilings, naming them", async () => {
    const { server, attacker } = h;
    const memory = await call(server.url, "POST", "/v1/sources", { key: attacker.key, json: { component_code: hog(""), memory_mb: 8192 } });
    expect(memory.status).toBe(400);
    expect(memory.body.error).toMatchObject({ code: "ValidationError", details: { field: "memory_mb" } });
    expect(memory.body.error.message).toContain("ceiling of 1024 MB (RUNNEL_MAX_MEMORY_MB)");
    const time = await call(server.url, "POST", "/v1/sources", { key: attacker.key, json: { component_code: hog(""), timeout_seconds: 3600 } });
    expect(time.status).toBe(400);
    expect(time.body.error).toMatchObject({ code: "ValidationError", details: { field: "timeout_seconds" } });
    expect(time.body.error.message).toContain("ceiling of 300 s (RUNNEL_MAX_TIMEOUT_SECONDS)");
    const source = await h.deploySource(hog(""));
    const update = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: attacker.key, json: { memory_mb: 2048 } });
    expect(update.status).toBe(400);
    expect(update.body.error.details.field).toBe("memory_mb");
  });
});
