import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";

const WITH_OPTIONS = `export default {
  name: "Options", version: "1",
  props: {
    region: { type: "string", options: ["eu", { label: "United States", value: "us" }] },
    repo: {
      type: "string",
      optional: true,
      async options({ page, prevContext, query, region }) {
        const names = ["alpha", "beta", "gamma", "delta"].filter((n) => n.includes(query ?? ""));
        if (prevContext?.nextPageToken) return { options: names.slice(2), context: {} };
        if (page === 0) return { options: names.slice(0, 2).map((n) => ({ label: region + "/" + n, value: n })), context: { nextPageToken: "p2" } };
        return [];
      },
    },
    broken: { type: "string", optional: true, async options() { throw new Error("the options API is down"); } },
  },
  async run() {},
};`;

describe("props", () => {
  let server: TestServer;
  let source: { id: string };

  beforeAll(async () => {
    server = await startTestServer();
    source = await deploySource(server, server.adminKey, { component_code: WITH_OPTIONS, filename: "options.mjs", configured_props: { region: "us" } });
  });
  afterAll(() => server.close());

  const options = (prop: string, body: Record<string, unknown> = {}) =>
    call(server.url, "POST", `/v1/sources/${source.id}/props/${prop}/options`, { key: server.adminKey, json: body });

  it("lists static options", async () => {
    const response = await options("region");
    expect(response.body.data).toEqual({ options: ["eu", { label: "United States", value: "us" }], context: null });
  });

  it("calls an async options method with the page, the previous context, the query and earlier props", async () => {
    const first = await options("repo", { page: 0 });
    expect(first.body.data).toEqual({ options: [{ label: "us/alpha", value: "alpha" }, { label: "us/beta", value: "beta" }], context: { nextPageToken: "p2" } });
    const next = await options("repo", { page: 1, prevContext: { nextPageToken: "p2" } });
    expect(next.body.data.options).toEqual(["gamma", "delta"]);
    const searched = await options("repo", { page: 0, query: "lt" });
    expect(searched.body.data.options).toEqual([{ label: "us/delta", value: "delta" }]);
    const searchedNext = await options("repo", { page: 1, query: "a", prevContext: { nextPageToken: "p2" } });
    expect(searchedNext.body.data.options).toEqual(["gamma", "delta"]);
  });

  it("reports a failing options method and an unknown prop clearly", async () => {
    const broken = await options("broken");
    expect(broken.status).toBe(502);
    expect(broken.body.error.message).toContain("the options API is down");
    const unknown = await options("nope");
    expect(unknown.status).toBe(404);
  });

  it("refuses a value outside the static options, naming the prop", async () => {
    const response = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { configured_props: { region: "mars" } } });
    expect(response.status).toBe(400);
    expect(response.body.error.details.field).toBe("configured_props.region");
  });
});

describe("a source's own limits", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("stops a run at the source's own time limit, and reports its limits", async () => {
    const code = "module.exports = { name: 'slow', version: '1', async run() { await new Promise((r) => setTimeout(r, 5000)); } };";
    const source = await deploySource(server, server.adminKey, { component_code: code, timeout_seconds: 1, memory_mb: 64 });
    expect(source).toMatchObject({ timeout_seconds: 1, memory_mb: 64 });
    const started = Date.now();
    const run = await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    expect(run.body.data.ok).toBe(false);
    expect(run.body.data.error.code).toBe("Timeout");
    expect(Date.now() - started).toBeLessThan(4_000);
    const cleared = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { timeout_seconds: null } });
    expect(cleared.body.data).toMatchObject({ timeout_seconds: null, memory_mb: 64 });
  });

  it("refuses limits out of range, naming them", async () => {
    const response = await call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: "module.exports = { name: 'x', version: '1', run() {} }", memory_mb: 1 } });
    expect(response.status).toBe(400);
    expect(response.body.error.details.field).toBe("memory_mb");
  });
});
