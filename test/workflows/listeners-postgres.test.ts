import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSchema } from "../helpers/postgres.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, logsOf } from "../helpers/sources.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { createWorkflow, runsOf, waitFor } from "./helpers.js";

// Sources, webhooks and $logs as listeners on the scale-out store: appends, deliveries removed with a
// source's commit, and webhook records through Kysely rather than SQLite's prepared statements. Then the
// same with the deliveries on BullMQ (RUNNEL_QUEUE=redis): relayed from the rows to jobs, a source's jobs
// completed after its commit, a webhook's failed attempt put back as a delayed job.
const REDIS_URL = process.env.RUNNEL_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

describeListeners("on PostgreSQL", () => ({}));
describeListeners("on PostgreSQL, deliveries on BullMQ (Redis)", () => ({ RUNNEL_QUEUE: "redis", REDIS_URL, RUNNEL_QUEUE_NAMESPACE: `runnel_ls_${randomBytes(4).toString("hex")}` }));

function describeListeners(title: string, queueEnv: () => Record<string, string>) {
  describe(`listeners beyond workflows ${title}`, () => {
    let pgSchema: Awaited<ReturnType<typeof createTestSchema>>;
    let server: TestServer;
    let key: string;
    let namespace: string | undefined;

    beforeAll(async () => {
      pgSchema = await createTestSchema("runnel_ls");
      const env = queueEnv();
      namespace = env.RUNNEL_QUEUE_NAMESPACE;
      server = await startTestServer({
        DATABASE_URL: pgSchema.databaseUrl,
        RUNNEL_EGRESS_ALLOW: "127.0.0.1",
        RUNNEL_WEBHOOK_RETRY_BASE_MS: "20",
        ...env,
      });
      key = (await createUser(server, "pat")).key;
    });
    afterAll(async () => {
      await server?.close();
      await pgSchema?.drop();
      if (namespace) {
        const redis = new Redis(REDIS_URL);
        const keys = await redis.keys(`${namespace}:*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      }
    });

    const subscribe = (query: string) => call(server.url, "POST", `/v1/subscriptions?${query}`, { key, rawBody: "" });

    it("a source hears itself once, a webhook gets the event after a failure, a workflow gets the $logs lines", async () => {
      const source = await deploySource(server, key, {
        name: "pg self",
        component_code: `export default {
          name: "PG self", version: "0.0.1", props: { http: "$.interface.http" },
          async run(event) {
            if (event && event.origin === "self") { console.log("echo heard", event.n); return; }
            console.log("request", event.body.n);
            this.$emit({ origin: "self", n: event.body.n });
          },
        }`,
      });
      expect((await subscribe(`emitter_id=${source.id}&listener_id=${source.id}`)).status).toBe(200);
      const receiver = await startWebhookReceiver({ failFirst: 1 });
      try {
        const webhook = (await call(server.url, "POST", `/v1/webhooks?url=${encodeURIComponent(receiver.url)}`, { key, rawBody: "" })).body.data;
        expect((await subscribe(`emitter_id=${source.id}&listener_id=${webhook.id}`)).status).toBe(200);
        const reader = await createWorkflow(server, key, {
          name: "PG log reader",
          trigger: { type: "http" },
          steps: [{ name: "look", code: "export default defineComponent({ async run({ steps }) { return steps.trigger.event.msg; } })" }],
        });
        expect((await subscribe(`emitter_id=${source.id}&listener_id=${reader.id}&event_name=$logs`)).status).toBe(200);

        const answer = await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 3 }) });
        expect(answer.status).toBe(200);

        await waitFor(() => logsOf(server, key, source.id), (lines) => lines.some((line) => line.includes("echo heard 3")), "the source's run of its own event");
        expect((await eventsOf(server, key, source.id, "&event_name=")).map((event) => event.event)).toEqual([{ origin: "self", n: 3 }]);
        const deliveries = await waitFor(
          async () => (await call(server.url, "GET", `/v1/webhooks/${webhook.id}/deliveries`, { key })).body.data,
          (items: any[]) => items[0]?.status === "delivered",
          "the webhook delivery",
        );
        expect(deliveries).toEqual([expect.objectContaining({ status: "delivered", attempts: 2, last_status: 200 })]);
        expect(receiver.received.map((request) => JSON.parse(request.body))).toEqual([
          { origin: "self", n: 3 },
          { origin: "self", n: 3 },
        ]);
        const runs = await waitFor(() => runsOf(server, key, reader.id), (list) => list.length === 2, "the reader's runs of both log lines");
        expect(runs.map((run) => run.steps[0].$return_value).sort()).toEqual(["echo heard 3", "request 3"]);
        if (namespace) {
          // They went through BullMQ, each once: the source's, the webhook's (after its delayed retry), the reader's two.
          const redis = new Redis(REDIS_URL);
          try {
            expect(await waitFor(() => redis.zcard(`${namespace}:deliveries:completed`), (count) => count >= 4, "four completed delivery jobs")).toBe(4);
          } finally {
            await redis.quit();
          }
          expect((await pgSchema.admin.query(`SELECT COUNT(*) AS n FROM ${pgSchema.schema}.deliveries`)).rows[0].n).toBe("0");
        }
      } finally {
        await receiver.close();
      }
    });
  });
}
