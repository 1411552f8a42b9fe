import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureRegistry } from "../../src/bench/fixture-registry.js";
import { runSource, startNpmFixture } from "../helpers/npm-registry.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

/** Written as components for the hosted service are: ES module, @pipedream/platform and @pipedream/types imported. */
const POLLING_SOURCE = `import { axios, ConfigurationError, DEFAULT_POLLING_SOURCE_TIMER_INTERVAL } from "@pipedream/platform";
import { defineSource } from "@pipedream/types";

export default defineSource({
  key: "fixture-new-items",
  name: "New items",
  version: "0.0.1",
  props: {
    baseUrl: { type: "string", label: "API address" },
    timer: { type: "$.interface.timer", default: { intervalSeconds: DEFAULT_POLLING_SOURCE_TIMER_INTERVAL } },
  },
  async run() {
    if (!this.baseUrl.startsWith("http")) throw new ConfigurationError("The API address must start with http:// or https://.");
    const items = await axios(this, { url: "/items", baseURL: this.baseUrl, params: { limit: 2 } });
    for (const item of items) this.$emit(item, { id: item.id, summary: item.title });
  },
});`;

describe("components written for @pipedream/platform", () => {
  let registry: FixtureRegistry;
  let server: TestServer;
  let api: Server;
  let apiUrl: string;
  const seen: string[] = [];

  beforeAll(async () => {
    registry = await startNpmFixture("/nonexistent/marker");
    server = await startTestServer({ RUNNEL_NPM_REGISTRY: registry.url, RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
    api = createServer((request, response) => {
      seen.push(request.url ?? "");
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify([{ id: 1, title: "first" }, { id: 2, title: "second" }]));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    apiUrl = `http://127.0.0.1:${(api.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
    await new Promise<void>((resolve) => api?.close(() => resolve()));
  });

  it("deploy unchanged: requests go through the platform's axios, bad props throw ConfigurationError", async () => {
    const deploy = (baseUrl: string, name: string) =>
      call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: POLLING_SOURCE, filename: "new-items.mjs", name, configured_props: { baseUrl } } });

    const good = await deploy(apiUrl, "good");
    expect(good.status).toBe(200);
    expect(good.body.data.configured_props.timer).toMatchObject({ interval_seconds: 900 });
    const run = await runSource(server, good.body.data.id);
    expect(run.ok).toBe(true);
    expect(run.events.map((event: any) => event.event)).toEqual([{ id: 1, title: "first" }, { id: 2, title: "second" }]);
    expect(seen).toContain("/items?limit=2");

    const bad = await deploy("ftp://nowhere", "bad");
    const failed = await runSource(server, bad.body.data.id);
    expect(failed.ok).toBe(false);
    expect(failed.error).toMatchObject({ name: "ConfigurationError", message: "The API address must start with http:// or https://." });
  });
});
