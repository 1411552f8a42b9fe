import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

describe("OpenAPI document", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("is a valid OpenAPI 3 document describing the routes", async () => {
    const response = await call(server.url, "GET", "/v1/openapi.json");
    expect(response.status).toBe(200);
    const validator = new Validator();
    const result = await validator.validate(response.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(response.body.openapi).toMatch(/^3\./);
    expect(Object.keys(response.body.paths)).toEqual(
      expect.arrayContaining([
        "/v1/users/me",
        "/v1/users",
        "/v1/users/me/api_keys",
        "/v1/users/me/api_keys/{id}",
        "/healthz",
        "/v1/workspaces/{org_id}/subscriptions",
        "/v1/orgs/{org_id}/sources",
        "/sse/{id}/emits",
        "/sse/{id}/observations",
        "/v1/env",
        "/v1/env/{name}",
      ]),
    );
    expect(Object.keys(response.body.paths["/v1/env/{name}"]).sort()).toEqual(["delete", "put"]);
    expect(response.body.paths["/v1/env/{name}"].put.requestBody).toBeDefined();
    expect(response.body.paths["/v1/users"].post.requestBody).toBeDefined();
    expect(response.body.components.securitySchemes.bearerAuth).toEqual({ type: "http", scheme: "bearer" });
  });
});
