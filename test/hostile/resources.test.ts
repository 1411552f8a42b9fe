import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";
import { post, servedThroughout, startHostileServer, whileAttacking, type HostileServer } from "./server-harness.js";

/**
 * Exhausting the machine through a real server: memory outside the heap,
 * CPU in a loop, and asking for more than the admin allows. The attacker's
 * call is stopped with a clear error; the bystander is served meanwhile.
 */
const responder = (body: string) => `module.exports = { name: "hog", version: "0.1.0", props: { http: { type: "$.interface.http", customResponse: true } },
  async run(event) { ${body} this.http.respond({ status: 200, body: "survived" }); } };`;

let hostile: HostileServer;
beforeAll(async () => {
  hostile = await startHostileServer();
});
afterAll(() => hostile?.close());

describe("resource exhaustion", () => {
  it("Buffers far past the heap limit: OutOfMemory naming the whole runner's limit, the bystander served", async () => {
    const { server, attacker, bystanderEndpoint } = hostile;
    const source = await deploySource(server, attacker.key, {
      component_code: responder(`const held = []; for (let i = 0; i < 256; i++) held.push(Buffer.alloc(16 * 1024 * 1024, 1));`),
      memory_mb: 128,
    });
    const { result, answers } = await whileAttacking(bystanderEndpoint, post(source.endpoint_url, {}));
    expect(result.status).toBe(502);
    expect(result.text).toContain("more than its memory limit of 256 MB (heap, Buffers and native memory together");
    expect(servedThroughout(answers)).toBe(true);
  });

  it("a busy loop: stopped at the source's time limit, the bystander served meanwhile", async () => {
    const { server, attacker, bystanderEndpoint } = hostile;
    const source = await deploySource(server, attacker.key, { component_code: responder(`for (;;) {}`), timeout_seconds: 2 });
    const { result, answers } = await whileAttacking(bystanderEndpoint, post(source.endpoint_url, {}));
    expect(result.status).toBe(502);
    expect(result.text).toContain("did not finish within its time limit of 2000 ms");
    expect(servedThroughout(answers)).toBe(true);
    expect(answers.length).toBeGreaterThan(5);
  });

  it("refuses memory_mb and timeout_seconds over the admin's ceilings, naming them", async () => {
    const { server, attacker } = hostile;
    const memory = await call(server.url, "POST", "/v1/sources", { key: attacker.key, json: { component_code: responder(""), memory_mb: 8192 } });
    expect(memory.status).toBe(400);
    expect(memory.body.error).toMatchObject({ code: "ValidationError", details: { field: "memory_mb" } });
    expect(memory.body.error.message).toContain("ceiling of 1024 MB (RUNNEL_MAX_MEMORY_MB)");
    const time = await call(server.url, "POST", "/v1/sources", { key: attacker.key, json: { component_code: responder(""), timeout_seconds: 3600 } });
    expect(time.status).toBe(400);
    expect(time.body.error).toMatchObject({ code: "ValidationError", details: { field: "timeout_seconds" } });
    expect(time.body.error.message).toContain("ceiling of 300 s (RUNNEL_MAX_TIMEOUT_SECONDS)");
    const source = await deploySource(server, attacker.key, { component_code: responder("") });
    const update = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: attacker.key, json: { memory_mb: 2048 } });
    expect(update.status).toBe(400);
    expect(update.body.error.details.field).toBe("memory_mb");
  });
});
