/**
 * The chaos run behind `npm run chaos`: a steady HTTP load on a source and a
 * workflow of a real server while that server is SIGKILLed again and again
 * and started again on the same data. Every request carries an id; a 2xx
 * answer is the promise that its event is kept, and its run happens, exactly
 * once. At the end, what was stored is read back and tallied against what
 * was acknowledged. Loopback only; bounded in time and requests.
 */
import { randomBytes, randomInt } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { ServerProcess } from "./server-process.js";
import { tally, type Tally } from "./tally.js";

export interface ChaosOptions {
  kills: number;
  /** How long the load runs, kills included. */
  seconds: number;
  store: "sqlite" | "postgres";
  /** Requests in flight at once. Default 8. */
  concurrency?: number;
  /** PostgreSQL to use for store "postgres" (a fresh schema is made in it). */
  postgresUrl?: string;
  /** Progress, one line at a time. */
  log?: (line: string) => void;
}

export interface ChaosReport {
  store: "sqlite" | "postgres";
  kills: number;
  seconds: number;
  requests: number;
  /** Requests that got no 2xx (the server was down or dying): allowed, and not counted as acknowledged. */
  unanswered: number;
  source: Tally;
  workflow: RunsTally;
  /** A workflow that answers its callers itself: acknowledged means answered by its run, so that run must be recorded once. */
  answering: RunsTally;
}

/** A workflow's runs: the tally of its successful ones, and why the others failed (error code: count). */
export type RunsTally = Tally & { runsCompleted: number; runsFailed: Record<string, number> };

const SOURCE = `module.exports = { name: "chaos source", version: "0.1.0", props: { http: { type: "$.interface.http" } },
  run(event) { this.$emit({ id: event.body.id }, { summary: event.body.id }); } };`;
const STEP = "export default defineComponent({ run({ steps }) { return steps.trigger.event.body.id; } })";
/**
 * Answers its caller itself: half the runs at their end (their delivery is
 * never written: the answer waits for the run's record), half before going
 * on for a moment (their delivery is recorded before the answer).
 */
const ANSWERING_STEP = `export default defineComponent({ async run({ steps, $ }) {
  const id = steps.trigger.event.body.id;
  await $.respond({ status: 200, body: { id } });
  if (Number(id.split("-").pop()) % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  return id;
} })`;
/** Below the source's retention (10,000) and the runs a workflow keeps (1,000): everything acknowledged stays readable. */
const MAX_SOURCE_ACKS = 9_000;
const MAX_WORKFLOW_ACKS = 900;
/**
 * How long the load goes on past its time for a target that has nothing
 * acknowledged yet: on a slow or busy machine the restarts can take most of
 * a short run, and a target with nothing acknowledged proves nothing about
 * losing or doubling.
 */
const UNTIL_EACH_ACKNOWLEDGED_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as any;
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

/** Every item of a paged list, following end_cursor. */
async function allPages(base: string, key: string, path: string): Promise<any[]> {
  const items: any[] = [];
  let after = "";
  for (;;) {
    const page = await api(base, key, "GET", `${path}${path.includes("?") ? "&" : "?"}limit=100${after ? `&after=${encodeURIComponent(after)}` : ""}`);
    items.push(...page.data);
    if (page.data.length < 100 || !page.page_info.end_cursor) return items;
    after = page.page_info.end_cursor;
  }
}

function runsTally(acknowledged: ReadonlySet<string>, runs: any[]): RunsTally {
  const completed = runs.filter((run) => run.status === "success");
  const runsFailed: Record<string, number> = {};
  for (const run of runs) if (run.status !== "success") runsFailed[run.error?.code ?? run.status] = (runsFailed[run.error?.code ?? run.status] ?? 0) + 1;
  return { ...tally(acknowledged, completed.map((run) => String(run.steps?.[0]?.$return_value))), runsCompleted: completed.length, runsFailed };
}

/** Every acknowledged workflow event must end as a run: the runs, once their count stops growing (bounded). */
async function settledRuns(base: string, key: string, workflowId: string, acknowledged: number): Promise<any[]> {
  let runs: any[] = [];
  let last = -1;
  for (let stable = 0, waited = 0; stable < 3 && waited < 60; waited++) {
    await sleep(1_000);
    runs = await allPages(base, key, `/v1/workflows/${workflowId}/runs`);
    stable = runs.length === last && runs.length >= acknowledged ? stable + 1 : 0;
    last = runs.length;
  }
  return runs;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const dataDir = await mkdtemp(join(tmpdir(), "runnel-chaos-"));
  const schema = `runnel_chaos_${randomBytes(4).toString("hex")}`;
  const postgresUrl = options.postgresUrl ?? "postgres://postgres@127.0.0.1:5432/test";
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  if (options.store === "postgres") await admin(`CREATE SCHEMA ${schema}`);
  // A run cut off by every kill would be recorded as a RepeatedCrash (the guard against a delivery that
  // takes its process down) and count as lost here; the kills are the test's, not the run's.
  const env: Record<string, string> = { RUNNEL_LOG_LEVEL: "warn", RUNNEL_MAX_RUN_INTERRUPTIONS: String(options.kills + 1) };
  if (options.store === "postgres") env.DATABASE_URL = `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const server = new ServerProcess({ dataDir, port: await freePort(), env });
  try {
    await server.start();
    const key = (await readFile(join(dataDir, "admin-api-key"), "utf8")).trim();
    const source = (await api(server.url, key, "POST", "/v1/sources", { component_code: SOURCE, retention: 10_000 })).data;
    const workflow = (await api(server.url, key, "POST", "/v1/workflows", { name: "Chaos", trigger: { type: "http" }, steps: [{ name: "record", code: STEP }] })).data;
    const answering = (await api(server.url, key, "POST", "/v1/workflows", { name: "Chaos answering", trigger: { type: "http" }, respond: "workflow", steps: [{ name: "record", code: ANSWERING_STEP }] })).data;
    const targets = [
      { name: "source" as const, url: source.endpoint_url as string, acked: new Set<string>(), cap: MAX_SOURCE_ACKS },
      { name: "workflow" as const, url: workflow.trigger.endpoint_url as string, acked: new Set<string>(), cap: MAX_WORKFLOW_ACKS },
      { name: "answering" as const, url: answering.trigger.endpoint_url as string, acked: new Set<string>(), cap: MAX_WORKFLOW_ACKS },
    ];
    let requests = 0;
    let unanswered = 0;
    let next = 0;
    const deadline = Date.now() + options.seconds * 1000;
    const openTargets = () => {
      const now = Date.now();
      if (now < deadline) return targets.filter((target) => target.acked.size < target.cap);
      // Past the deadline, only the targets with nothing acknowledged yet, for a bounded time.
      return now < deadline + UNTIL_EACH_ACKNOWLEDGED_MS ? targets.filter((target) => target.acked.size === 0) : [];
    };
    const load = async () => {
      for (let open = openTargets(); open.length > 0; open = openTargets()) {
        const target = open[next % open.length]!;
        const id = `${target.name}-${next++}`;
        requests += 1;
        try {
          const response = await fetch(target.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id }), signal: AbortSignal.timeout(10_000) });
          await response.arrayBuffer();
          if (response.ok) target.acked.add(id);
          else unanswered += 1;
        } catch {
          unanswered += 1;
          await sleep(20);
        }
      }
    };
    const kill = async () => {
      for (let done = 0; done < options.kills; done++) {
        const left = deadline - Date.now();
        const gap = Math.max(100, left / (options.kills - done + 1));
        await sleep(randomInt(Math.floor(gap / 2), Math.floor(gap * 1.5) + 1));
        await server.kill();
        log(`killed the server (${done + 1}/${options.kills}); starting it again`);
        await server.start();
      }
    };
    await Promise.all([...Array.from({ length: options.concurrency ?? 8 }, load), kill()]);
    log(`load done: ${requests} requests; waiting for the workflow's runs`);

    const runs = await settledRuns(server.url, key, workflow.id, targets[1]!.acked.size);
    const answered = await settledRuns(server.url, key, answering.id, targets[2]!.acked.size);
    const events = await allPages(server.url, key, `/v1/sources/${source.id}/event_summaries?expand=event`);

    return {
      store: options.store,
      kills: options.kills,
      seconds: options.seconds,
      requests,
      unanswered,
      source: tally(targets[0]!.acked, events.map((event) => String(event.event?.id))),
      workflow: runsTally(targets[1]!.acked, runs),
      answering: runsTally(targets[2]!.acked, answered),
    };
  } finally {
    await server.stop().catch(() => server.kill());
    await rm(dataDir, { recursive: true, force: true });
    if (options.store === "postgres") await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  }
}
