import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSealed, SecretBox } from "../../src/engine/secrets.js";
import { openStore } from "../../src/store/open-store.js";
import { runCli } from "../helpers/child.js";
import { call, createUser, startTestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";

/**
 * `runnel admin rotate-master-key` (the real binary) on a data folder whose
 * server is stopped: every secret sealed again (sources', workflow steps',
 * webhooks' signing secrets), the new key where the old one was, the old
 * one opening nothing; refused while a server runs; and a rotation cut off
 * half-way settled by the next start.
 */
const SOURCE_SECRET = "rotate-source-secret-1f2e3d";
const STEP_SECRET = "rotate-step-secret-9a8b7c";
const ENV_SECRET = "rotate-env-secret-5d4c3b";
const SOURCE = `module.exports = { name: "keeps a token", version: "0.1.0", props: { http: { type: "$.interface.http", customResponse: true }, token: { type: "string", secret: true } },
  run() { this.$emit({ answered: true }); this.http.respond({ status: 200, body: this.token }); } };`;
/** The webhook receivers live on loopback: allowed, as an admin allows an internal host. */
const ALLOW_LOOPBACK = { RUNNEL_EGRESS_ALLOW: "127.0.0.1" };

let root: string;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "runnel-rotate-"));
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rm(root, { recursive: true, force: true });
});

/**
 * A data folder with a source, a workflow and a webhook holding secrets (the
 * webhook subscribed to the source); returns how to check them after a restart.
 */
async function seed(dataDir: string, env: Record<string, string> = {}) {
  const server = await startTestServer({ ...ALLOW_LOOPBACK, ...env }, { dataDir, keepData: true });
  const user = await createUser(server, "rotator");
  const source = await deploySource(server, user.key, { component_code: SOURCE, configured_props: { token: SOURCE_SECRET } });
  const workflow = await createWorkflow(server, user.key, {
    name: "Rotated",
    trigger: { type: "http" },
    steps: [
      { name: "use", code: "export default defineComponent({ props: { key: { type: 'string', secret: true } }, run() { return this.key; } })", props: { key: STEP_SECRET } },
      { name: "env", code: "export default defineComponent({ props: { token: { type: 'string' } }, run() { return this.token; } })", props: { token: "{{process.env.ROTATED_TOKEN}}" } },
    ],
  });
  expect((await call(server.url, "PUT", "/v1/env/ROTATED_TOKEN", { key: user.key, json: { value: ENV_SECRET, secret: true } })).status).toBe(200);
  const webhook = (await call(server.url, "POST", `/v1/webhooks?url=${encodeURIComponent(receiver.url)}&name=rotated`, { key: user.key, rawBody: "" })).body.data;
  expect(webhook.signing_secret).toMatch(/^whsec_/);
  expect((await call(server.url, "POST", `/v1/subscriptions?emitter_id=${source.id}&listener_id=${webhook.id}`, { key: user.key, rawBody: "" })).status).toBe(200);
  await server.close();
  return { key: user.key, userId: user.id, sourceId: source.id, workflowId: workflow.id, webhookId: webhook.id as string, signingSecret: webhook.signing_secret as string };
}

async function secretsStillWork(dataDir: string, seeded: Awaited<ReturnType<typeof seed>>, env: Record<string, string> = {}): Promise<void> {
  const server = await startTestServer({ ...ALLOW_LOOPBACK, ...env }, { dataDir, keepData: true });
  const toThisWebhook = () => receiver.received.filter((request) => request.headers["x-runnel-webhook-id"] === seeded.webhookId);
  const seenBefore = toThisWebhook().length;
  try {
    const source = await call(server.url, "GET", `/v1/sources/${seeded.sourceId}`, { key: seeded.key });
    expect(await (await fetch(source.body.data.endpoint_url, { method: "POST" })).text()).toBe(SOURCE_SECRET);
    const workflow = await call(server.url, "GET", `/v1/workflows/${seeded.workflowId}`, { key: seeded.key });
    await fetch(workflow.body.data.trigger.endpoint_url, { method: "POST" });
    const runs = await waitFor(() => runsOf(server, seeded.key, seeded.workflowId), (list) => list.some((run: any) => run.status !== "running"), "the run");
    expect(runs[0].steps.map((step: { $return_value: unknown }) => step.$return_value)).toEqual([STEP_SECRET, ENV_SECRET]);

    // The source's event reached the webhook, signed with the secret shown at its creation: the sealed secret opened.
    const deliveries = await waitFor(
      async () => (await call(server.url, "GET", `/v1/webhooks/${seeded.webhookId}/deliveries`, { key: seeded.key })).body.data,
      (list: any[]) => list.length > seenBefore && list.every((delivery) => delivery.status !== "retrying"),
      "the webhook's delivery",
    );
    expect(deliveries[0]).toMatchObject({ status: "delivered", last_status: 200, last_error: null });
    const [request] = toThisWebhook().slice(seenBefore);
    expect(JSON.parse(request!.body)).toEqual({ answered: true });
    const expected = Buffer.from(`sha256=${createHmac("sha256", seeded.signingSecret).update(request!.body).digest("hex")}`);
    const given = Buffer.from(String(request!.headers["x-runnel-signature"]));
    expect(given.length === expected.length && timingSafeEqual(given, expected)).toBe(true);
  } finally {
    await server.close();
  }
}

async function sealedSample(dataDir: string): Promise<string> {
  const store = await openStore({ databaseUrl: null, dataDir });
  try {
    const sample = await store.anySealedValue(isSealed);
    expect(sample).not.toBeNull();
    return sample!;
  } finally {
    await store.close();
  }
}

describe("rotating the master key", () => {
  it("re-seals every secret with a new key in the data folder, and the old key opens nothing", async () => {
    const dataDir = join(root, "plain");
    const seeded = await seed(dataDir);
    const oldKey = Buffer.from((await readFile(join(dataDir, "master-key"), "utf8")).trim(), "hex");
    const result = await runCli(["admin", "rotate-master-key", "--data-dir", dataDir], { env: {} });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("Re-sealed 4 secrets of 1 source, 1 workflow, 1 environment variable, 1 webhook, 0 connected accounts and 0 OAuth clients with a new master key, written to");
    expect(result.stdout).toBe("");
    const newKey = Buffer.from((await readFile(join(dataDir, "master-key"), "utf8")).trim(), "hex");
    expect(newKey.equals(oldKey)).toBe(false);
    expect(existsSync(join(dataDir, "master-key.next"))).toBe(false);
    const sample = await sealedSample(dataDir);
    expect(() => new SecretBox(oldKey).open(sample)).toThrow();
    expect(new SecretBox(newKey).open(sample)).toMatch(/rotate-(source|step)-secret/);
    // The secret environment variable too: the step that reads it gets it (secretsStillWork), and only the new key opens it.
    const store = await openStore({ databaseUrl: null, dataDir });
    try {
      const [envVar] = await store.findEnvVars(seeded.userId, ["ROTATED_TOKEN"]);
      expect(() => new SecretBox(oldKey).open(envVar!.value)).toThrow();
      expect(new SecretBox(newKey).open(envVar!.value)).toBe(ENV_SECRET);
    } finally {
      await store.close();
    }
    await secretsStillWork(dataDir, seeded);
  });

  it("is refused while a server runs on the data folder", async () => {
    const dataDir = join(root, "running");
    await seed(dataDir);
    const server = await startTestServer({}, { dataDir, keepData: true });
    try {
      const result = await runCli(["admin", "rotate-master-key", "--data-dir", dataDir], { env: {} });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`is running on ${dataDir}`);
    } finally {
      await server.close();
    }
  });

  it("keeps a key file outside the data folder (RUNNEL_MASTER_KEY_FILE) where it is", async () => {
    const dataDir = join(root, "outside");
    const keyFile = join(root, "keys", "runnel.key");
    await rm(join(root, "keys"), { recursive: true, force: true });
    await import("node:fs/promises").then((fs) => fs.mkdir(join(root, "keys"), { recursive: true }));
    await writeFile(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const env = { RUNNEL_MASTER_KEY_FILE: keyFile };
    const seeded = await seed(dataDir, env);
    expect(existsSync(join(dataDir, "master-key"))).toBe(false);
    const before = await readFile(keyFile, "utf8");
    const result = await runCli(["admin", "rotate-master-key", "--data-dir", dataDir], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`written to ${keyFile}`);
    expect(await readFile(keyFile, "utf8")).not.toBe(before);
    await secretsStillWork(dataDir, seeded, env);
  });

  it("is settled by the next start when it stopped between sealing and renaming the key", async () => {
    const dataDir = join(root, "interrupted");
    const seeded = await seed(dataDir);
    const keyPath = join(dataDir, "master-key");
    const oldKey = Buffer.from((await readFile(keyPath, "utf8")).trim(), "hex");
    // Stopped after the new key was written and every value sealed with it, before the rename.
    const newKey = randomBytes(32);
    await writeFile(`${keyPath}.next`, newKey.toString("hex"), { mode: 0o600 });
    const store = await openStore({ databaseUrl: null, dataDir });
    await store.resealSecrets((value) => (isSealed(value) ? new SecretBox(newKey).seal(new SecretBox(oldKey).open(value)) : null));
    await store.close();
    await secretsStillWork(dataDir, seeded);
    expect(Buffer.from((await readFile(keyPath, "utf8")).trim(), "hex").equals(newKey)).toBe(true);
    expect(existsSync(`${keyPath}.next`)).toBe(false);
    // Stopped before anything was sealed: the new key is dropped.
    await writeFile(`${keyPath}.next`, randomBytes(32).toString("hex"), { mode: 0o600 });
    await secretsStillWork(dataDir, seeded);
    expect(Buffer.from((await readFile(keyPath, "utf8")).trim(), "hex").equals(newKey)).toBe(true);
    expect(existsSync(`${keyPath}.next`)).toBe(false);
  });
});
