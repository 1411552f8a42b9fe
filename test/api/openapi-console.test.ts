import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

/** What the console reads is in the OpenAPI document, with its schemas, like every other /v1 route. */
describe("OpenAPI document: the console's routes and fields", () => {
  let server: TestServer;
  let document: any;
  beforeAll(async () => {
    server = await startTestServer();
    document = (await call(server.url, "GET", "/v1/openapi.json")).body;
  });
  afterAll(() => server.close());

  const okSchema = (path: string, method: string, status = "200") => document.paths[path][method].responses[status].content["application/json"].schema;

  it("describes the activity, manual runs and options before deploy", () => {
    const activity = okSchema("/v1/users/me/activity", "get");
    expect(Object.keys(activity.properties.data.properties).sort()).toEqual(["buckets", "failing_workflows"]);
    expect(document.paths["/v1/users/me/activity"].get.parameters.map((parameter: any) => parameter.name)).toEqual(["minutes"]);

    const runs = document.paths["/v1/workflows/{id}/runs"].post;
    expect(runs.requestBody).toBeDefined();
    expect(runs.summary).toContain("manual");
    expect(Object.keys(okSchema("/v1/workflows/{id}/runs", "post", "202").properties.data.properties)).toEqual(["run_id"]);
    expect(okSchema("/v1/workflows/{id}/runs", "post").properties.data.properties.steps).toBeDefined();

    const options = document.paths["/v1/components/props/options"].post;
    expect(Object.keys(options.requestBody.content["application/json"].schema.properties)).toEqual(
      expect.arrayContaining(["component", "prop", "configured_props", "page", "prev_context", "query"]),
    );
    expect(Object.keys(okSchema("/v1/components/props/options", "post").properties.data.properties).sort()).toEqual(["context", "options"]);
  });

  it("lists the new fields of sources and workflows", () => {
    const source = okSchema("/v1/users/me/sources", "get").properties.data.items;
    expect(source.required).toEqual(expect.arrayContaining(["last_event_at", "event_count"]));
    const workflow = okSchema("/v1/users/me/workflows", "get").properties.data.items;
    expect(workflow.required).toEqual(expect.arrayContaining(["last_run_at", "runs_24h", "errors_24h"]));
  });
});
