import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";

/**
 * Secret props of workflow steps: sealed at rest like sources', masked in
 * every view, kept across updates that do not resend them, open only in
 * the run; and no 400 ever repeats a secret value.
 */
const SECRET = "wf-secret-VALUE-7d1f0c3a9e";
const NEW_SECRET = "wf-secret-ROTATED-55aa0b";
const hash = (text: string) => createHash("sha256").update(text).digest("hex");
const STEP_CODE = `export default defineComponent({
  props: { token: { type: "string", secret: true, label: "API token" }, region: { type: "string" } },
  async run() { return require("node:crypto").createHash("sha256").update(this.token).digest("hex") + "@" + this.region; },
})`;

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "keeper")).key;
});
afterAll(() => server?.close());

async function fire(workflow: any, n: number): Promise<string> {
  await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
  const runs = await waitFor(() => runsOf(server, key, workflow.id), (list) => list.length >= n, `run ${n}`);
  const run = runs.find((candidate: any) => candidate.trigger_event?.body?.n === n) ?? runs[0];
  return run.steps[0].$return_value;
}

/** Every byte of the data folder's SQLite files (the database, its WAL and shared memory). */
async function databaseBytes(): Promise<Buffer> {
  const names = (await readdir(server.dataDir)).filter((name) => name.startsWith("runnel.sqlite"));
  return Buffer.concat(await Promise.all(names.map((name) => readFile(join(server.dataDir, name)))));
}

describe("secret props of workflow steps", () => {
  let workflow: any;

  it("are masked in the create answer, GET and the list, and reach the step in the run", async () => {
    workflow = await createWorkflow(server, key, { name: "Uses a token", trigger: { type: "http" }, steps: [{ name: "call", code: STEP_CODE, props: { token: SECRET, region: "eu" } }] });
    expect(workflow.steps[0].props).toEqual({ token: "**********", region: "eu" });
    const got = await call(server.url, "GET", `/v1/workflows/${workflow.id}`, { key });
    expect(got.body.data.steps[0].props).toEqual({ token: "**********", region: "eu" });
    const listed = await call(server.url, "GET", "/v1/users/me/workflows", { key });
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);
    expect(JSON.stringify(listed.body)).toContain("**********");
    expect(await fire(workflow, 1)).toBe(`${hash(SECRET)}@eu`);
  });

  it("are kept by an update that leaves them out, or sends the mask back", async () => {
    const renamed = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { name: "Uses a token, renamed" } });
    expect(renamed.status).toBe(200);
    expect(await fire(workflow, 2)).toBe(`${hash(SECRET)}@eu`);
    const roundTrip = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: [{ name: "call", code: STEP_CODE, props: { token: "**********", region: "us" } }] } });
    expect(roundTrip.status).toBe(200);
    expect(await fire(workflow, 3)).toBe(`${hash(SECRET)}@us`);
    const left = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: [{ name: "call", code: STEP_CODE, props: { region: "ap" } }] } });
    expect(left.status).toBe(200);
    expect(await fire(workflow, 4)).toBe(`${hash(SECRET)}@ap`);
  });

  it("take a new value when one is sent, and a client cannot pass off a sealed-looking value as the stored one", async () => {
    const changed = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: [{ name: "call", code: STEP_CODE, props: { token: NEW_SECRET, region: "eu" } }] } });
    expect(changed.body.data.steps[0].props.token).toBe("**********");
    expect(await fire(workflow, 5)).toBe(`${hash(NEW_SECRET)}@eu`);
    const forged = "enc:v1:AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA";
    await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: [{ name: "call", code: STEP_CODE, props: { token: forged, region: "eu" } }] } });
    // Taken as a new plain value, sealed like any other: the run sees exactly the text sent.
    expect(await fire(workflow, 6)).toBe(`${hash(forged)}@eu`);
  });

  it("are nowhere in the SQLite file or its WAL", async () => {
    const bytes = await databaseBytes();
    expect(bytes.length).toBeGreaterThan(0);
    for (const value of [SECRET, NEW_SECRET]) expect(bytes.includes(Buffer.from(value))).toBe(false);
  });
});

describe("a 400 about a secret prop", () => {
  it("never repeats the value given", async () => {
    const source = `module.exports = { name: "needs a secret", version: "0.1.0", props: { token: { type: "string", secret: true }, plan: { type: "string", secret: true, options: ["a", "b"] } }, run() {} };`;
    const wrongType = await call(server.url, "POST", "/v1/sources", { key, json: { component_code: source, configured_props: { token: 987654321123, plan: "a" } } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.details.field).toBe("configured_props.token");
    expect(wrongType.body.error.message).toContain("must be a string");
    expect(JSON.stringify(wrongType.body)).not.toContain("987654321123");
    const notAnOption = await call(server.url, "POST", "/v1/sources", { key, json: { component_code: source, configured_props: { token: "x", plan: "hunter2-plan-secret" } } });
    expect(notAnOption.status).toBe(400);
    expect(JSON.stringify(notAnOption.body)).not.toContain("hunter2-plan-secret");
  });
});

describe("secret step props stored in the clear before they were sealed", () => {
  it("are sealed when the server starts, and the run still sees them", async () => {
    const first = await startTestServer({}, { keepData: true });
    const owner = await createUser(first, "upgraded");
    const plain = "stored-in-the-clear-4c2d";
    const created = await createWorkflow(first, owner.key, { name: "Old", trigger: { type: "http" }, steps: [{ name: "call", code: STEP_CODE, props: { token: "placeholder", region: "eu" } }] });
    // As a database written before this release holds it: the secret in the clear.
    const stored = (await first.server.store.findWorkflow(owner.id, created.id))!;
    await first.server.store.updateWorkflow({ ...stored, steps: stored.steps.map((step) => ({ ...step, props: { ...step.props, token: plain } })) });
    const { dataDir } = first;
    await first.server.close();
    const before = Buffer.concat(await Promise.all((await readdir(dataDir)).filter((name) => name.startsWith("runnel.sqlite")).map((name) => readFile(join(dataDir, name)))));
    expect(before.includes(Buffer.from(plain))).toBe(true);

    const second = await startTestServer({}, { dataDir, keepData: true });
    try {
      const shown = await call(second.url, "GET", `/v1/workflows/${created.id}`, { key: owner.key });
      expect(shown.body.data.steps[0].props.token).toBe("**********");
      await fetch(created.trigger.endpoint_url.replace(first.url, second.url), { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":1}' });
      const runs = await waitFor(() => runsOf(second, owner.key, created.id), (list) => list.length === 1, "the run after the upgrade");
      expect(runs[0].steps[0].$return_value).toBe(`${hash(plain)}@eu`);
    } finally {
      await second.server.close();
    }
    const after = Buffer.concat(await Promise.all((await readdir(dataDir)).filter((name) => name.startsWith("runnel.sqlite")).map((name) => readFile(join(dataDir, name)))));
    expect(after.includes(Buffer.from(plain))).toBe(false);
  });
});
