import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "mona")).key;
});
afterAll(() => server.close());

const STEPS = [{ name: "a", code: "export default defineComponent({ async run() { return 1; } })" }];

describe("messages a person understands", () => {
  it("names the values a field may take, rather than 'must be equal to constant'", async () => {
    const refused = await call(server.url, "POST", "/v1/workflows", { key, json: { name: "Typo", trigger: { type: "htp" }, steps: STEPS } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('trigger.type must be one of "http", "timer" or "manual".');
    expect(refused.body.error.details).toMatchObject({ field: "trigger.type", allowed: ["http", "timer", "manual"] });
    const hosted = await call(server.url, "POST", "/v1/workflows", { key, json: { settings: { name: "Typo" }, triggers: [{ type: "cron" }], steps: STEPS } });
    expect(hosted.status).toBe(400);
    expect(hosted.body.error.message).not.toContain("constant");
    expect(hosted.body.error.message).toContain('"http", "timer" or "manual"');
  });

  it("names the cron field at fault and where it is, for a workflow's timer and a source's", async () => {
    const workflow = await call(server.url, "POST", "/v1/workflows", { key, json: { name: "Bad Cron", trigger: { type: "timer", cron: "0 0 32 * *" }, steps: STEPS } });
    expect(workflow.status).toBe(400);
    expect(workflow.body.error.details.field).toBe("trigger.cron");
    expect(workflow.body.error.message).toContain('field 3 of 5 (day of month, at character 5) is "32"; the day of month takes 1-31');

    const source = await call(server.url, "POST", "/v1/sources", {
      key,
      json: {
        component_code: "module.exports = { name: 'tick', version: '1.0.0', props: { timer: { type: '$.interface.timer' } }, async run() {} };",
        configured_props: { timer: { cron: "0 24 * * *" } },
      },
    });
    expect(source.status).toBe(400);
    expect(source.body.error.details.field).toBe("configured_props.timer");
    expect(source.body.error.message).toContain('field 2 of 5 (hour, at character 3) is "24"; the hour takes 0-23');

    const count = await call(server.url, "POST", "/v1/workflows", { key, json: { name: "Short Cron", trigger: { type: "timer", cron: "* * *" }, steps: STEPS } });
    expect(count.body.error.message).toContain('"* * *" has 3 fields; a cron expression has 5');
  });
});
