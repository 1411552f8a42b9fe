import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";
import { createWorkflow, errorsOf, waitFor } from "../workflows/helpers.js";
import { post, servedThroughout, sourceLogs, startHostileServer, whileAttacking, type HostileServer } from "./server-harness.js";

/**
 * The attack that used to take the whole server down for good: user code
 * writing raw bytes to the runner's channel (descriptor 3). Now it costs the
 * attacker's own call; the server and another user go on.
 */
const FLOOD_CHANNEL = `
  const fs = require("node:fs");
  const chunk = Buffer.alloc(1024 * 1024, "a");
  for (let i = 0; i < 300; i++) fs.writeSync(3, chunk);
`;

let hostile: HostileServer;
beforeAll(async () => {
  hostile = await startHostileServer();
});
afterAll(() => hostile?.close());

describe("a component that writes to its runner's channel", () => {
  it("as a source: its request fails with a clear error, its logs say why, the bystander is served, the server lives", async () => {
    const { server, attacker, bystanderEndpoint } = hostile;
    const source = await deploySource(server, attacker.key, {
      component_code: `module.exports = { name: "channel flood", version: "0.1.0", props: { http: { type: "$.interface.http", customResponse: true } }, async run() { ${FLOOD_CHANNEL} this.http.respond({ status: 200, body: "survived" }); } };`,
    });
    const { result, answers } = await whileAttacking(bystanderEndpoint, Promise.all([post(source.endpoint_url, { go: 1 }), post(source.endpoint_url, { go: 2 })]));
    for (const answer of result) {
      expect(answer.status).toBe(502);
      expect(answer.text).toContain("The runner was stopped because its channel to the server carried something that is not a message");
    }
    expect(servedThroughout(answers)).toBe(true);
    const logs = await sourceLogs(server, attacker.key, source.id);
    expect(logs.join("\n")).toContain("descriptor 3");
    expect((await call(server.url, "GET", "/healthz")).status).toBe(200);
  });

  it("as a workflow step fired by an anonymous request: the run becomes an error of that workflow, and the server goes on", async () => {
    const { server, attacker, bystanderEndpoint } = hostile;
    const workflow = await createWorkflow(server, attacker.key, {
      name: "Channel flood step",
      trigger: { type: "http" },
      steps: [{ name: "flood", code: `export default defineComponent({ async run() { ${FLOOD_CHANNEL} return "survived"; } })` }],
    });
    const { answers } = await whileAttacking(bystanderEndpoint, post(workflow.trigger.endpoint_url, { anonymous: true }));
    expect(servedThroughout(answers)).toBe(true);
    const errors = await waitFor(() => errorsOf(server, attacker.key, workflow.id), (body) => body.data.length > 0, "the step's error");
    // A runner that died is the platform's InternalFailure to the workflow (docs/workflows.md); the message says why.
    expect(errors.data[0].event.error.code).toBe("InternalFailure");
    expect(JSON.stringify(errors.data[0].event.error)).toContain("descriptor 3");
    expect((await call(server.url, "GET", "/healthz")).status).toBe(200);
  });

  it("a flood straight to standard output stops the call at the log limit", async () => {
    const { server, attacker, bystanderEndpoint } = hostile;
    const source = await deploySource(server, attacker.key, {
      component_code: `module.exports = { name: "stdout flood", version: "0.1.0", props: { http: { type: "$.interface.http", customResponse: true } }, async run() {
        const fs = require("node:fs"); const chunk = Buffer.alloc(1024 * 1024, "z");
        for (let i = 0; i < 10240; ) { try { fs.writeSync(1, chunk); i++; } catch (error) { if (error.code !== "EAGAIN") throw error; } }
        this.http.respond({ status: 200, body: "survived" }); } };`,
    });
    const { result, answers } = await whileAttacking(bystanderEndpoint, post(source.endpoint_url, {}));
    expect(result.status).toBe(502);
    expect(result.text).toContain("straight to its standard output or error");
    expect(servedThroughout(answers)).toBe(true);
  });
});
