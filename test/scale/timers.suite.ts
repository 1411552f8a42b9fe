import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerProcess } from "../../src/chaos/server-process.js";
import { BullmqJobQueue } from "../../src/queue/bullmq/bullmq-job-queue.js";
import { call } from "../helpers/server.js";
import { createClusterFixture, send, waitFor } from "../helpers/test-cluster.js";

/**
 * Timer sources on the shared queue (BullMQ job schedulers): 1 api + 2
 * worker processes of the built binary (`npm run build` first), on Redis,
 * then on PostgreSQL alone. Ticks are checked by their due times (the
 * event's `tick`, in seconds), which BullMQ's scheduler sets exactly.
 */

const TICKER = `export default { name: "Ticker", version: "0.1.0", props: { timer: { type: "$.interface.timer", default: { intervalSeconds: 1 } } }, async run(event) { this.$emit({ tick: event.timestamp, every: event.interval_seconds }); } };`;

interface Cluster {
  api: ServerProcess;
  adminKey: string;
  /** The queue as the processes see it, opened by the test to look at (and tamper with) its schedules. */
  queue: BullmqJobQueue;
  /** Stray schedule and source deployed before the workers started, whose schedule the test took away. */
  early: { sourceId: string; strayId: string };
  stop(): Promise<void>;
}

async function startCluster(kind: "redis" | "postgres", prefix: string): Promise<Cluster> {
  const fixture = await createClusterFixture(kind, prefix);
  const queue = await BullmqJobQueue.open({ target: fixture.target, logger: pino({ level: "silent" }) });
  const start = async (role: "api" | "worker") => fixture.start(role);
  const stop = async () => {
    await fixture.stop().finally(() => queue.close());
  };
  try {
    const api = await start("api");
    const adminKey = await fixture.adminKeyOf(api.dataDir);

    // Before any worker runs: a timer source whose schedule is lost (as one deployed before the queue was shared),
    // and a schedule whose source does not exist. Only the workers' start-up can put either right.
    const early = await send(api.server.url, "POST", "/v1/sources", adminKey, { component_code: TICKER, name: "early", configured_props: { timer: { intervalSeconds: 1 } } });
    expect((await queue.scheduledTimer(early.id))?.schedule).toEqual({ intervalSeconds: 1, cron: null });
    await queue.unscheduleTimer(early.id);
    const strayId = `dc_gone${randomBytes(6).toString("hex")}`;
    await queue.scheduleTimer({ sourceId: strayId, ownerId: early.owner_id ?? "u_gone", schedule: { intervalSeconds: 3600, cron: null } });
    expect((await queue.scheduledTimers()).map((timer) => timer.sourceId)).toEqual([strayId]);

    await Promise.all([start("worker"), start("worker")]);
    return { api: api.server, adminKey, queue, early: { sourceId: early.id, strayId }, stop };
  } catch (error) {
    // A start that failed half-way leaves no process behind.
    await stop().catch(() => undefined);
    throw error;
  }
}

/** The due times (epoch seconds) of a source's ticks so far, oldest first. */
async function ticksOf(cluster: Cluster, sourceId: string): Promise<number[]> {
  const answer = await call(cluster.api.url, "GET", `/v1/sources/${sourceId}/event_summaries?expand=event&limit=100`, { key: cluster.adminKey });
  return (answer.body.data as any[]).map((event) => event.event.tick as number).sort((a, b) => a - b);
}

const gapsOf = (ticks: number[]) => ticks.slice(1).map((tick, index) => tick - ticks[index]!);

function describeTimers(cluster: () => Cluster) {
  it("schedules, at the workers' start, a timer source that had no schedule, and removes the schedule of a source that is gone", async () => {
    const { queue, early } = cluster();
    const ticks = await waitFor(() => ticksOf(cluster(), early.sourceId), (list) => list.length >= 3, "ticks of the source deployed before the workers");
    expect(new Set(ticks).size, JSON.stringify(ticks)).toBe(ticks.length);
    expect((await queue.scheduledTimers()).map((timer) => timer.sourceId)).toEqual([early.sourceId]);
  }, 60_000);

  it("ticks a 1 s timer deployed through the api once per second across two workers: no doubles, no gaps; a new interval takes effect; deactivated, it stops", async () => {
    const { api, adminKey } = cluster();
    const source = await send(api.url, "POST", "/v1/sources", adminKey, { component_code: TICKER, name: `ticker-${randomBytes(3).toString("hex")}`, configured_props: { timer: { intervalSeconds: 1 } } });
    const first = await waitFor(() => ticksOf(cluster(), source.id), (list) => list.length >= 6, "six ticks", 40_000);
    // Each due time once (two workers never both ran one), one second apart (none lost).
    expect(gapsOf(first), JSON.stringify(first)).toEqual(first.slice(1).map(() => 1));

    await send(api.url, "PUT", `/v1/sources/${source.id}`, adminKey, { configured_props: { timer: { intervalSeconds: 2 } } });
    const changedAt = Date.now() / 1000;
    const after = await waitFor(
      async () => (await ticksOf(cluster(), source.id)).filter((tick) => tick > changedAt),
      (list) => list.length >= 3,
      "three ticks on the new interval",
      40_000,
    );
    expect(gapsOf(after), JSON.stringify(after)).toEqual(after.slice(1).map(() => 2));
    const all = await ticksOf(cluster(), source.id);
    expect(new Set(all).size, JSON.stringify(all)).toBe(all.length);

    await send(api.url, "PUT", `/v1/sources/${source.id}`, adminKey, { active: false });
    const deactivatedAt = Date.now() / 1000;
    // A tick already running when the change landed may still commit; none due after it runs.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const late = (await ticksOf(cluster(), source.id)).filter((tick) => tick > deactivatedAt);
    expect(late).toEqual([]);
    expect(await cluster().queue.scheduledTimer(source.id)).toBeNull();

    await call(api.url, "DELETE", `/v1/sources/${source.id}`, { key: adminKey });
  }, 120_000);
}

describe("timers on the queue: 1 api + 2 workers, Redis", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster("redis", "timers_redis");
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  describeTimers(() => cluster);
});

describe("timers on the queue: 1 api + 2 workers, PostgreSQL alone", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster("postgres", "timers_pg");
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  describeTimers(() => cluster);
});
