import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/server.js";
import { expectBystanderServed, startHostileHarness, type HostileHarness } from "./harness.js";

/**
 * Attacks at deploy time: code that misbehaves as soon as its module loads.
 * Deploying runs it once in a runner (to describe it), so the deploy is what
 * must fail, with a 400 naming the cause, and store nothing.
 *
 * Not here: a module that loops forever at load. It is contained (400 with
 * cause Timeout) but only after the inspection's fixed 30 s, too long for
 * this suite.
 */

let h: HostileHarness;
beforeAll(async () => {
  h = await startHostileHarness();
});
afterAll(() => h?.close());

const component = (atLoad: string) => `${atLoad}
module.exports = { name: "Loads badly", version: "1", props: { http: { type: "$.interface.http" } }, async run() { this.$emit({ ok: true }); } };`;

describe("a component that attacks as its module loads", () => {
  it.each([
    ["calls process.exit", `process.exit(1);`, "ProcessExit", /called process\.exit\(1\)/],
    ["fills its heap", `const hoard = []; while (true) hoard.push(new Array(1e6).fill(1));`, "OutOfMemory", /ran out of memory/],
    ["reads /etc/passwd", `require("node:fs").readFileSync("/etc/passwd", "utf8");`, "InvalidComponent", /failed to load: Error: Access to this API has been restricted/],
    ["starts a process", `require("node:child_process").execSync("id");`, "InvalidComponent", /failed to load: Error: Access to this API has been restricted/],
  ])("that %s is refused with 400 naming the cause, and nothing is deployed", async (_what, atLoad, cause, message) => {
    const before = await call(h.server.url, "GET", "/v1/users/me/sources", { key: h.attacker.key });
    const { outcome, bystander } = await h.whileAttacking(() => call(h.server.url, "POST", "/v1/sources", { key: h.attacker.key, json: { component_code: component(atLoad) } }));
    expect(outcome.status).toBe(400);
    expect(outcome.body.error).toMatchObject({ code: "ValidationError", details: { field: "component_code", cause } });
    expect(outcome.body.error.message).toMatch(/^The component could not be loaded: /);
    expect(outcome.body.error.message).toMatch(message);
    const after = await call(h.server.url, "GET", "/v1/users/me/sources", { key: h.attacker.key });
    expect(after.body.data.length).toBe(before.body.data.length);
    expectBystanderServed(bystander);
  });
});
