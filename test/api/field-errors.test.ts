import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";

/** Validation errors name the input at fault in a structure a form reads, not only in prose. */
const WITH_PROPS = `module.exports = {
  name: "Checked",
  version: "1",
  props: {
    http: "$.interface.http",
    channel: { type: "string", label: "Channel", options: ["alerts", "news"] },
    count: { type: "integer", min: 1, max: 10, optional: true },
    token: { type: "string", secret: true, optional: true },
  },
  async run() {},
};`;

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "xena")).key;
});
afterAll(() => server.close());

const deploy = (configured_props: Record<string, unknown>) => call(server.url, "POST", "/v1/sources", { key, json: { component_code: WITH_PROPS, configured_props } });

describe("a bad prop named in the error's details", () => {
  it.each([
    ["a required prop left out", {}, "channel", "is required"],
    ["a value outside the options", { channel: "sports" }, "channel", "not one of its options"],
    ["a number past max", { channel: "news", count: 11 }, "count", "count"],
    ["a value of the wrong type", { channel: "news", count: "five" }, "count", "count"],
    ["an unknown prop", { channel: "news", colour: "red" }, "colour", "Unknown prop"],
    ["a value for a platform-provided prop", { channel: "news", http: {} }, "http", "takes no value"],
  ])("on deploy: %s", async (_what, configured, prop, words) => {
    const refused = await deploy(configured);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "ValidationError", details: { field: `configured_props.${prop}`, prop } });
    expect(refused.body.error.message).toContain(words);
  });

  it("on update, and for a secret without showing its value", async () => {
    const source = await deploySource(server, key, { component_code: WITH_PROPS, configured_props: { channel: "news" } });
    const refused = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key, json: { configured_props: { channel: "news", token: 12345 } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "ValidationError", details: { field: "configured_props.token", prop: "token" } });
    expect(JSON.stringify(refused.body)).not.toContain("12345");
  });

  it("for a workflow step's prop: the step too", async () => {
    const refused = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: {
        name: "Steps",
        steps: [
          { name: "first", code: "export default defineComponent({ async run() { return 1; } })" },
          { name: "fetch", code: "export default defineComponent({ props: { times: { type: 'integer', max: 3 } }, async run() { return 1; } })", props: { times: 9 } },
        ],
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "ValidationError", details: { field: "steps[1].props.times", prop: "times", step: "fetch" } });
  });

  it("for a field the schema refuses: its path and where it was", async () => {
    const refused = await call(server.url, "POST", "/v1/sources", { key, json: { component_code: WITH_PROPS, retention: 0 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "ValidationError", details: { field: "retention", location: "body" } });
  });
});
