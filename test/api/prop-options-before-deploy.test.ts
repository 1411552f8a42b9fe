import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

/** POST /v1/components/props/options: the deploy form's options for a component not deployed yet. */
const DRAFTED = `
const demo = {
  type: "app",
  app: "demo",
  propDefinitions: {
    repo: {
      type: "string",
      label: "Repository",
      async options({ page, prevContext, query, region }) {
        const names = ["alpha", "beta", "gamma", "delta"].filter((name) => name.includes(query ?? ""));
        if (prevContext && prevContext.next) return { options: names.slice(2), context: {} };
        return { options: names.slice(0, 2).map((name) => ({ label: region + "/" + name + " (page " + page + ")", value: name })), context: { next: "p2" } };
      },
    },
  },
};
export default {
  key: "drafted",
  name: "Drafted",
  version: "0.1.0",
  type: "source",
  props: {
    demo,
    http: { type: "$.interface.http" },
    region: { type: "string", options: ["eu", { label: "United States", value: "us" }] },
    repo: { propDefinition: [demo, "repo", (configured) => ({ region: configured.region })] },
    note: { type: "string", optional: true },
    where: { type: "string", optional: true, async options() { return [String(process.pid)]; } },
    broken: { type: "string", optional: true, async options() { throw new Error("the options API is down"); } },
  },
  async run() {},
};
`;

let server: TestServer;
let key: string;
let componentId: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "vera")).key;
  const saved = await call(server.url, "POST", "/v1/components", { key, json: { component_code: DRAFTED, filename: "drafted.mjs" } });
  expect(saved.status).toBe(200);
  componentId = saved.body.data.id;
  const published = await call(server.url, "POST", "/v1/components/registry", { key, json: { component_code: DRAFTED, filename: "drafted.mjs" } });
  expect(published.status).toBe(201);
});
afterAll(() => server.close());

const optionsOf = (body: Record<string, unknown>, as = key) => call(server.url, "POST", "/v1/components/props/options", { key: as, json: body });

describe("a prop's options before deploy", () => {
  it("answers static options", async () => {
    const answer = await optionsOf({ component: { key: "drafted" }, prop: "region" });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { options: ["eu", { label: "United States", value: "us" }], context: null } });
  });

  it("runs a propDefinition's options with the earlier props, page, previous context and query, by key, key and version, or id", async () => {
    for (const component of [{ key: "drafted" }, { key: "drafted", version: "0.1.0" }, { id: componentId }]) {
      const first = await optionsOf({ component, prop: "repo", configured_props: { region: "us" }, page: 0 });
      expect(first.status).toBe(200);
      expect(first.body.data).toEqual({ options: [{ label: "us/alpha (page 0)", value: "alpha" }, { label: "us/beta (page 0)", value: "beta" }], context: { next: "p2" } });
    }
    const next = await optionsOf({ component: { key: "drafted" }, prop: "repo", configured_props: { region: "eu" }, page: 1, prev_context: { next: "p2" } });
    expect(next.body.data).toEqual({ options: ["gamma", "delta"], context: {} });
    const searched = await optionsOf({ component: { key: "drafted" }, prop: "repo", configured_props: { region: "eu" }, query: "lt" });
    expect(searched.body.data.options).toEqual([{ label: "eu/delta (page 0)", value: "delta" }]);
  });

  it("runs the options method in the sandbox, never in the server's process", async () => {
    const answer = await optionsOf({ component: { id: componentId }, prop: "where" });
    expect(answer.status).toBe(200);
    expect(answer.body.data.options).toHaveLength(1);
    expect(answer.body.data.options[0]).not.toBe(String(process.pid));
  });

  it("answers 400 naming a prop it does not have or one without options, and the method's own failure", async () => {
    const missing = await optionsOf({ component: { key: "drafted" }, prop: "nope" });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: "ValidationError", details: { field: "prop" } });
    expect(missing.body.error.message).toContain('"nope"');
    const typed = await optionsOf({ component: { key: "drafted" }, prop: "note" });
    expect(typed.status).toBe(400);
    expect(typed.body.error.details.field).toBe("prop");
    expect(typed.body.error.message).toContain('"note"');
    const broken = await optionsOf({ component: { key: "drafted" }, prop: "broken" });
    expect(broken.status).toBe(502);
    expect(broken.body.error.message).toContain("the options API is down");
    const unnamed = await optionsOf({ component: { key: "drafted" } });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error.details.field).toBe("prop");
  });

  it("answers 404 for a component that is not the caller's or does not exist, and deploys nothing", async () => {
    const other = await createUser(server, "walt");
    expect((await optionsOf({ component: { id: componentId }, prop: "region" }, other.key)).status).toBe(404);
    expect((await optionsOf({ component: { key: "drafted" }, prop: "region" }, other.key)).status).toBe(404);
    expect((await optionsOf({ component: { key: "drafted", version: "9.9.9" }, prop: "region" })).status).toBe(404);
    const listed = await call(server.url, "GET", "/v1/users/me/sources", { key });
    expect(listed.body.data).toEqual([]);
  });

  it("refuses an encrypted value among the props, naming it", async () => {
    const answer = await optionsOf({ component: { key: "drafted" }, prop: "repo", configured_props: { region: "enc:v1:abc" } });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.field).toBe("configured_props.region");
  });
});
