import { afterAll, describe, expect, it } from "vitest";
import type { HttpResponse } from "../../src/sandbox/http-response.js";
import { SandboxFixture } from "./helpers.js";

const fixture = new SandboxFixture();
afterAll(() => fixture.close());

describe("the component API inside a runner", () => {
  it("collects emits and returns the value of run", async () => {
    const bundle = fixture.bundle(`
      module.exports = defineSource({
        name: "emitter",
        async run(event) {
          this.$emit({ n: 1, got: event.x }, { id: "a", summary: "first", ts: 1700000000000 });
          this.$emit({ n: 2 }, { id: 2, name: "other" });
          console.log("hello %s", "log", { a: 1 });
          console.error("bad");
          process.stdout.write("raw\\n");
          return { done: true, when: new Date(0) };
        },
      });
    `);
    const result = await fixture.invoke(bundle, { call: { kind: "run", event: { x: 42 } } });
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    expect(result.value).toEqual({ done: true, when: "1970-01-01T00:00:00.000Z" });
    expect(result.emits).toEqual([
      { event: { n: 1, got: 42 }, meta: { id: "a", summary: "first", ts: 1700000000000 } },
      { event: { n: 2 }, meta: { id: 2, name: "other" } },
    ]);
    expect(result.logs.map(({ stream, text }) => [stream, text])).toEqual([
      ["stdout", "hello log { a: 1 }"],
      ["stderr", "bad"],
      ["stdout", "raw"],
    ]);
    expect(result.db).toBeNull();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("refuses to emit what is not JSON", async () => {
    const bundle = fixture.bundle(`
      module.exports = { name: "bad emit", run() { this.$emit({ m: new Map() }); } };
    `);
    const result = await fixture.invoke(bundle);
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: "UserError", name: "TypeError" });
    expect(result.error?.message).toContain("this.$emit(): the event is not JSON-serializable: found a Map at .m");
  });

  it("gives run, hooks, options and methods the same `this`: props, bound methods", async () => {
    const bundle = fixture.bundle(`
      module.exports = {
        name: "this",
        props: { greeting: { type: "string" }, count: { type: "integer" }, color: { type: "string", async options({ page }) { return [this.greeting + page, this.shout("x")]; } } },
        methods: {
          shout(text) { return this.twice(text).toUpperCase(); },
          twice(text) { return text + text + this.count; },
          sum(a, b) { return a + b + this.count; },
        },
        hooks: { async deploy() { return this.shout(this.greeting); } },
        run() { return { shouted: this.shout(this.greeting), props: [this.greeting, this.count] }; },
      };
    `);
    const props = { greeting: "hi", count: 3 };
    const run = await fixture.invoke(bundle, { props });
    expect(run.value).toEqual({ shouted: "HIHI3", props: ["hi", 3] });
    const hook = await fixture.invoke(bundle, { props, call: { kind: "hook", hook: "deploy" } });
    expect(hook.value).toBe("HIHI3");
    const missingHook = await fixture.invoke(bundle, { props, call: { kind: "hook", hook: "deactivate" } });
    expect(missingHook).toMatchObject({ ok: true });
    expect(missingHook.value).toBeUndefined();
    const options = await fixture.invoke(bundle, { props, call: { kind: "options", prop: "color", args: { page: 2 } } });
    expect(options.value).toEqual(["hi2", "XX3"]);
    const method = await fixture.invoke(bundle, { props, call: { kind: "method", method: "sum", args: [1, 2] } });
    expect(method.value).toBe(6);
  });

  it("keeps the db: synchronous get/set round trip, JSON only, 60 KB at most", async () => {
    const bundle = fixture.bundle(`
      module.exports = {
        name: "db",
        props: { db: "$.service.db" },
        run(event) {
          if (event.step === "set") {
            const before = this.db.get("count");
            this.db.set("count", (before ?? 0) + 1);
            this.db.set("nested", { list: [1, 2], at: new Date(0) });
            return { before, missing: this.db.get("nope") };
          }
          if (event.step === "fn") this.db.set("callback", { f() {} });
          if (event.step === "big") this.db.set("big", "x".repeat(70 * 1024));
          return this.db.get("count");
        },
      };
    `);
    const first = await fixture.invoke(bundle, { dbProps: ["db"], call: { kind: "run", event: { step: "set" } } });
    expect(first.value).toEqual({ before: undefined });
    expect(first.db).toEqual({ count: 1, nested: { list: [1, 2], at: "1970-01-01T00:00:00.000Z" } });
    const second = await fixture.invoke(bundle, { dbProps: ["db"], db: first.db ?? {}, call: { kind: "run", event: { step: "set" } } });
    expect(second.value).toEqual({ before: 1 });
    expect(second.db).toMatchObject({ count: 2 });
    const read = await fixture.invoke(bundle, { dbProps: ["db"], db: second.db ?? {}, call: { kind: "run", event: { step: "get" } } });
    expect(read.value).toBe(2);
    expect(read.db).toBeNull();

    const notJson = await fixture.invoke(bundle, { dbProps: ["db"], call: { kind: "run", event: { step: "fn" } } });
    expect(notJson.ok).toBe(false);
    expect(notJson.error?.message).toContain(`this.db.set("callback"): the value is not JSON-serializable: found a function at .f`);

    const tooBig = await fixture.invoke(bundle, { dbProps: ["db"], call: { kind: "run", event: { step: "big" } } });
    expect(tooBig.ok).toBe(false);
    expect(tooBig.error?.message).toMatch(/this\.db\.set\("big"\): the store would hold \d+ bytes of JSON, over its limit of 60 KB/);
    expect(tooBig.db).toBeNull();
  });

  it("sends respond() to the host at once and checks the status", async () => {
    const bundle = fixture.bundle(`
      module.exports = {
        name: "http",
        props: { http: { type: "$.interface.http", customResponse: true } },
        async run(event) {
          if (event.status !== undefined) {
            try { this.http.respond({ status: event.status }); return "accepted"; } catch (error) { return error.message; }
          }
          this.http.respond({ status: "201", headers: { "x-endpoint": this.http.endpoint }, body: { created: true } });
          await new Promise((resolve) => setTimeout(resolve, 300));
          try { this.http.respond({ status: 200 }); } catch (error) { return error.message; }
          return "responded twice";
        },
      };
    `);
    const responses: Array<{ response: HttpResponse; at: number }> = [];
    const props = { http: { endpoint: "https://example.test/e/1" } };
    const result = await fixture.invoke(bundle, { props }, { onRespond: (response) => responses.push({ response, at: Date.now() }) });
    const answeredAt = Date.now();
    // The second respond() cannot answer: ignored with a line in the logs, and the run goes on (API-COMPAT).
    expect(result.value).toBe("responded twice");
    expect(result.logs.map((log) => log.text)).toContainEqual(expect.stringMatching(/^respond\(\) was ignored: an earlier call already answered/));
    expect(responses).toHaveLength(1);
    expect(responses[0]?.response).toEqual({
      status: 201,
      headers: { "x-endpoint": "https://example.test/e/1", "content-type": "application/json; charset=utf-8" },
      body: '{"created":true}',
    });
    // Delivered while run was still waiting (300 ms), not with the result.
    expect(responses[0]?.at).toBeLessThanOrEqual(answeredAt - 250);

    for (const status of [99, 600, "abc", 200.5]) {
      const refused = await fixture.invoke(bundle, { props, call: { kind: "run", event: { status } } });
      expect(refused.value).toMatch(/^respond\(\): status must be an integer from 100 to 599/);
    }
    const buffer = fixture.bundle(`
      module.exports = { name: "buf", props: { http: { type: "$.interface.http", customResponse: true } }, run() { this.http.respond({ status: 200, body: Buffer.from("bytes") }); } };
    `);
    let body: unknown;
    await fixture.invoke(buffer, {}, { onRespond: (response) => (body = response.body) });
    expect(Buffer.from(body as Uint8Array).toString()).toBe("bytes");
  });
});
