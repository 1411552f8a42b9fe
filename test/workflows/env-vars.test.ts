import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

/**
 * Environment variables: each user's named values (`/v1/env`), which a step
 * receives where a prop says `{{process.env.NAME}}`, resolved per run and
 * never written into the workflow or its runs; `process.env` in user code
 * stays empty.
 */
let server: TestServer;
let ada: { id: string; key: string };
let bob: { id: string; key: string };
beforeAll(async () => {
  server = await startTestServer();
  ada = await createUser(server, "ada");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const put = (key: string, name: string, body: unknown) => call(server.url, "PUT", `/v1/env/${name}`, { key, json: body });
const list = async (key: string) => (await call(server.url, "GET", "/v1/env", { key })).body;

const ECHO = `export default defineComponent({
  props: { token: { type: "string" }, url: { type: "string" } },
  run() { return { token: this.token, url: this.url, env: Object.keys(process.env) }; },
})`;

/** Triggers the workflow once and answers its new run (the endpoint answers before the run is recorded). */
async function runOnce(key: string, workflow: any): Promise<any> {
  const before = (await runsOf(server, key, workflow.id)).length;
  await fetch(workflow.trigger.endpoint_url, { method: "POST", body: "x" });
  const runs = await waitFor(() => runsOf(server, key, workflow.id), (listed) => listed.length > before && listed[0].status !== "running", "the run");
  return runs[0];
}

describe("/v1/env", () => {
  it("sets, lists, replaces and removes variables", async () => {
    const set = await put(ada.key, "REGION", { value: "eu-west-1" });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ name: "REGION", value: "eu-west-1", secret: false });
    expect((await put(ada.key, "A_FIRST", { value: "" })).status).toBe(200);
    expect((await list(ada.key)).data.map((envVar: { name: string }) => envVar.name)).toEqual(["A_FIRST", "REGION"]);
    expect((await put(ada.key, "REGION", { value: "us-east-2" })).body.data.value).toBe("us-east-2");
    expect((await call(server.url, "DELETE", "/v1/env/A_FIRST", { key: ada.key })).status).toBe(204);
    const again = await call(server.url, "DELETE", "/v1/env/A_FIRST", { key: ada.key });
    expect(again.status).toBe(404);
    expect(again.body.error.message).toMatch(/You have no environment variable A_FIRST/);
    expect((await list(ada.key)).data).toMatchObject([{ name: "REGION", value: "us-east-2" }]);
    expect((await list(ada.key)).page_info).toMatchObject({ total_count: 1, count: 1 });
  });

  it("never shows a secret's value again", async () => {
    const set = await put(ada.key, "API_TOKEN", { value: "tok-7f3a9c", secret: true });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ name: "API_TOKEN", value: null, secret: true });
    const listed = await call(server.url, "GET", "/v1/env", { key: ada.key });
    expect(listed.body.data.find((envVar: { name: string }) => envVar.name === "API_TOKEN")).toMatchObject({ value: null, secret: true });
    expect(JSON.stringify(listed.body)).not.toContain("tok-7f3a9c");
  });

  it.each<[string, string, unknown, string, RegExp]>([
    ["a name starting with a digit", "1ST", { value: "x" }, "name", /"1ST" is not a valid environment variable name: use letters, digits and _/],
    ["a name with a dash", "MY-VAR", { value: "x" }, "name", /not a valid environment variable name/],
    ["a value that is not text", "N", { value: 5 }, "value", /value/],
    ["a value over 64 KB", "BIG", { value: "x".repeat(64 * 1024 + 1) }, "value", /an environment variable may be at most 64 KB/],
    ["secret that is not a boolean", "S", { value: "x", secret: "yes" }, "secret", /secret/],
  ])("refuses %s with a 400 naming the field", async (_rule, name, body, field, message) => {
    const refused = await put(ada.key, name, body);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe(field);
    expect(refused.body.error.message).toMatch(message);
  });

  it("keeps each user's variables from every other user", async () => {
    await put(bob.key, "REGION", { value: "bob-region" });
    expect((await list(bob.key)).data).toMatchObject([{ name: "REGION", value: "bob-region" }]);
    expect(JSON.stringify(await list(bob.key))).not.toContain("API_TOKEN");
    expect((await call(server.url, "DELETE", "/v1/env/API_TOKEN", { key: bob.key })).status).toBe(404);
    expect((await list(ada.key)).data.find((envVar: { name: string }) => envVar.name === "REGION").value).toBe("us-east-2");
  });
});

describe("{{process.env.NAME}} in step props", () => {
  it("gives the value alone and inside text, reads it fresh each run, and stores it nowhere", async () => {
    await put(ada.key, "API_TOKEN", { value: "tok-7f3a9c", secret: true });
    await put(ada.key, "HOST", { value: "api.example.test" });
    const workflow = await createWorkflow(server, ada.key, {
      name: "Uses env",
      trigger: { type: "http" },
      steps: [{ name: "echo", code: ECHO, props: { token: "{{process.env.API_TOKEN}}", url: "https://{{ process.env.HOST }}/v1?region={{process.env.REGION}}" } }],
    });
    expect(workflow.steps[0].props).toEqual({ token: "{{process.env.API_TOKEN}}", url: "https://{{ process.env.HOST }}/v1?region={{process.env.REGION}}" });
    const run = await runOnce(ada.key, workflow);
    expect(run.status).toBe("success");
    // process.env in user code stays empty: the values come only through props.
    expect(run.steps[0].$return_value).toEqual({ token: "tok-7f3a9c", url: "https://api.example.test/v1?region=us-east-2", env: [] });

    await put(ada.key, "HOST", { value: "api2.example.test" });
    const second = await runOnce(ada.key, workflow);
    expect(second.steps[0].$return_value.url).toBe("https://api2.example.test/v1?region=us-east-2");

    const stored = await call(server.url, "GET", `/v1/workflows/${workflow.id}`, { key: ada.key });
    expect(JSON.stringify(stored.body)).not.toContain("tok-7f3a9c");
    expect(JSON.stringify(stored.body)).not.toContain("api2.example.test");
  });

  it("keeps a returned secret only where the step put it: Runnel copies it nowhere else", async () => {
    const workflow = await createWorkflow(server, ada.key, {
      name: "Keeps quiet",
      trigger: { type: "http" },
      steps: [{ name: "use", code: "export default defineComponent({ props: { token: { type: 'string' } }, run() { return this.token.length; } })", props: { token: "{{process.env.API_TOKEN}}" } }],
    });
    const run = await runOnce(ada.key, workflow);
    expect(run.steps[0].$return_value).toBe("tok-7f3a9c".length);
    const runs = await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=100`, { key: ada.key });
    expect(JSON.stringify(runs.body)).not.toContain("tok-7f3a9c");
    const logs = await call(server.url, "GET", `/v1/workflows/${workflow.id}/logs?limit=100`, { key: ada.key });
    expect(JSON.stringify(logs.body)).not.toContain("tok-7f3a9c");
  });

  it("fails the step with a ConfigurationError naming an unknown variable, and never reads another user's", async () => {
    const workflow = await createWorkflow(server, bob.key, {
      name: "Unknown env",
      trigger: { type: "http" },
      steps: [{ name: "echo", code: ECHO, props: { token: "Bearer {{process.env.API_TOKEN}}", url: "{{process.env.HOST}}" } }],
    });
    const run = await runOnce(bob.key, workflow);
    expect(run.status).toBe("error");
    const errors = await errorsOf(server, bob.key, workflow.id);
    expect(errors.data[0].event.error).toMatchObject({ code: "ConfigurationError", cellId: workflow.steps[0].id });
    expect(errors.data[0].event.error.msg).toMatch(/^Step "echo": The expression \{\{process\.env\.API_TOKEN\}\} in steps\[0\]\.props\.token reads the environment variable API_TOKEN, which you do not have\. Set it/);
    expect(JSON.stringify(errors)).not.toContain("tok-7f3a9c");
  });

  it("fails a misfitting value naming its type only, never the value", async () => {
    const workflow = await createWorkflow(server, ada.key, {
      name: "Misfit env",
      trigger: { type: "http" },
      steps: [{ name: "count", code: "export default defineComponent({ props: { n: { type: 'integer' } }, run() { return this.n; } })", props: { n: "{{process.env.API_TOKEN}}" } }],
    });
    await runOnce(ada.key, workflow);
    const errors = await errorsOf(server, ada.key, workflow.id);
    expect(errors.data[0].event.error.code).toBe("ConfigurationError");
    expect(errors.data[0].event.error.msg).toMatch(/^Step "count": prop "n" is \{\{process\.env\.API_TOKEN\}\}, which gave a string, and it must be a whole number\./);
    expect(JSON.stringify(errors)).not.toContain("tok-7f3a9c");
  });

  it("refuses at save time an expression under process that is not process.env.NAME", async () => {
    const refused = await call(server.url, "POST", "/v1/workflows", {
      key: ada.key,
      json: { name: "Bad env", trigger: { type: "http" }, steps: [{ name: "echo", code: ECHO, props: { token: "{{process.env.API_TOKEN.length}}", url: "x" } }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("steps[0].props.token");
    expect(refused.body.error.message).toMatch(/must be \{\{process\.env\.NAME\}\}/);
  });
});
