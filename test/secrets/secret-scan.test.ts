import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestSchema } from "../helpers/postgres.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";

/**
 * After a server has been given secrets (source and step secret props, a
 * secret environment variable that a step reads, a connected account's key
 * and an OAuth client's secret) and
 * used API keys, nothing of them is in what the store keeps: the SQLite
 * file with its WAL and shared memory, or every row of every table of the
 * PostgreSQL schema.
 */
const secretValues = () => ({
  source: `scan-source-secret-${randomBytes(6).toString("hex")}`,
  step: `scan-step-secret-${randomBytes(6).toString("hex")}`,
  env: `scan-env-secret-${randomBytes(6).toString("hex")}`,
});

async function exercise(server: TestServer, values: ReturnType<typeof secretValues>): Promise<string[]> {
  const user = await createUser(server, "scanned");
  const extraKey = await call(server.url, "POST", "/v1/users/me/api_keys", { key: user.key, json: { name: "second" } });
  const source = await deploySource(server, user.key, {
    component_code: `module.exports = { name: "secretive", version: "0.1.0", props: { http: { type: "$.interface.http" }, token: { type: "string", secret: true } }, run() { this.$emit({ length: this.token.length }); } };`,
    configured_props: { token: values.source },
  });
  await fetch(source.endpoint_url, { method: "POST", body: "x" });
  // An update that leaves the secret out keeps it (sealed again, never stored in the clear).
  await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: user.key, json: { name: "secretive-renamed" } });
  const workflow = await createWorkflow(server, user.key, {
    name: "Scanned",
    trigger: { type: "http" },
    steps: [
      { name: "use", code: `export default defineComponent({ props: { key: { type: "string", secret: true } }, run() { return this.key.length; } })`, props: { key: values.step } },
      { name: "env", code: `export default defineComponent({ props: { token: { type: "string" } }, run() { return this.token.length; } })`, props: { token: "{{process.env.SCAN_TOKEN}}" } },
    ],
  });
  expect((await call(server.url, "PUT", "/v1/env/SCAN_TOKEN", { key: user.key, json: { value: values.env, secret: true } })).status).toBe(200);
  await fetch(workflow.trigger.endpoint_url, { method: "POST", body: "x" });
  const runs = await waitFor(() => runsOf(server, user.key, workflow.id), (listed) => listed.length === 1 && listed[0].status !== "running", "the run that used the secrets");
  expect(runs[0].steps.map((step: { $return_value: unknown }) => step.$return_value)).toEqual([values.step.length, values.env.length]);
  // A connected account's key and an OAuth client's secret (issue 17), used by a source through $auth.
  const accountKey = `scan-account-key-${values.env}`;
  const clientSecret = `scan-client-secret-${values.env}`;
  expect((await call(server.url, "PUT", "/v1/apps/github/oauth_client", { key: server.adminKey, json: { client_id: "scan-client", client_secret: clientSecret } })).status).toBe(200);
  const account = await call(server.url, "POST", "/v1/accounts", { key: user.key, json: { app: "anthropic", name: "scan", fields: { api_key: accountKey } } });
  expect(account.status).toBe(201);
  const keyed = await deploySource(server, user.key, {
    component_code: `export default defineComponent({ name: "keyed", version: "0.1.0", props: { anthropic: { type: "app", app: "anthropic" }, http: { type: "$.interface.http", customResponse: true } }, run() { this.http.respond({ status: 200, body: this.anthropic.$auth.api_key.length }); } })`,
    filename: "keyed.mjs",
    configured_props: { anthropic: { authProvisionId: account.body.data.id } },
  });
  expect(await (await fetch(keyed.endpoint_url, { method: "POST", body: "x" })).json()).toBe(accountKey.length);
  return [values.source, values.step, values.env, server.adminKey, user.key, extraKey.body.data.key, accountKey, clientSecret];
}

function expectNone(haystack: Buffer, needles: string[]): void {
  expect(haystack.length).toBeGreaterThan(0);
  for (const needle of needles) expect(haystack.includes(Buffer.from(needle)), `found ${needle.slice(0, 12)}…`).toBe(false);
}

describe("a scan of the store for secrets and keys", () => {
  it("finds none in the SQLite file, its WAL or its shared memory", async () => {
    const server = await startTestServer({}, { keepData: true });
    const needles = await exercise(server, secretValues());
    const { dataDir } = server;
    await server.close();
    const files = (await readdir(dataDir)).filter((name) => name.startsWith("runnel.sqlite"));
    expect(files).toContain("runnel.sqlite");
    expectNone(Buffer.concat(await Promise.all(files.map((name) => readFile(join(dataDir, name))))), needles);
  });

  describe("on PostgreSQL", () => {
    let database: Awaited<ReturnType<typeof createTestSchema>> | undefined;
    afterAll(() => database?.drop());

    it("finds none in any row of any table", async () => {
      database = await createTestSchema("runnel_scan");
      const { admin, schema } = database;
      const server = await startTestServer({ DATABASE_URL: database.databaseUrl });
      const needles = await exercise(server, secretValues());
      await server.close();
      const tables = await admin.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [schema]);
      expect(tables.rows.length).toBeGreaterThan(5);
      const dump: string[] = [];
      for (const { table_name } of tables.rows) {
        const rows = await admin.query<{ row: string }>(`SELECT t::text AS row FROM "${schema}"."${table_name}" t`);
        dump.push(...rows.rows.map((row) => row.row));
      }
      expectNone(Buffer.from(dump.join("\n")), needles);
    });
  });
});
