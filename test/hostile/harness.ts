/**
 * The hostile suite's harness: a real server, an attacker and a bystander.
 *
 * Every test in test/hostile/ is an attack by one user (the attacker) through
 * the real API: a source or a workflow step whose code misbehaves. Each test
 * asserts three things:
 *   1. containment: what the code tried did not happen (nothing read, written,
 *      started or killed; the server is up; the next call works);
 *   2. a clear error for the owner: the code and message the attacker sees, in
 *      its source's logs or its workflow's `$errors` (and the 502 its caller got);
 *   3. the bystander was served meanwhile: `whileAttacking(attack)` hits the
 *      bystander's own HTTP source from loopback, one request after another,
 *      for as long as the attack runs (and at least a few times), and
 *      `expectBystanderServed(answers)` checks that there were answers, that
 *      every one was 200, and that each echoed its own request.
 *
 * Use (one server per file, shared by its tests):
 *
 *   let h: HostileHarness;
 *   beforeAll(async () => { h = await startHostileHarness(); });
 *   afterAll(() => h.close());
 *
 *   it("stops a loop", async () => {
 *     const source = await h.deploySource(hostileSource(`while (true) {}`), { timeout_seconds: 1 });
 *     const { outcome, bystander } = await h.whileAttacking(() => h.attack(source));
 *     expect(outcome.status).toBe(502);
 *     expect(outcome.body.error.details.code).toBe("Timeout");            // the caller's 502
 *     expect((await h.logsOf(source))[0]).toMatch(/\[Timeout\]$/);        // the owner's log line
 *     expectBystanderServed(bystander);                                   // the other user, meanwhile
 *     await h.expectOwnerRecovers(source);                                // contained: the next call works
 *   });
 *
 * Code helpers: `hostileSource(js)` is the usual attacker: an HTTP source that
 * runs `js` (the body of its async `run(event)`, `this` the component) when
 * called with `?attack` (`h.attack(source)`) and otherwise answers 200
 * `{ ok: true }` (`h.expectOwnerRecovers(source)`); `js` may report what it
 * saw with `this.http.respond({ status, body })`. `hostileStep(js)` is the
 * same as a workflow code step (`run({ steps, $ })`), attacking when the
 * trigger's body says `{ attack: true }`: `h.deployWorkflow([code…])`,
 * `h.attack(workflow)`, `h.errorsOf(workflow)` (the `$errors` entries' `error`:
 * code, msg, cellId, stack), `h.runsOf(workflow)`. `runBody`,
 * `respondingRunBody` and `stepBody` wrap a body without the attack switch.
 * `h.bystanderEvents()` lists what the bystander's source stored: only its
 * own `{ n }` events may be there. `h.expectServerHealthy()`: /healthz and
 * one bystander request.
 *
 * The attacks and where they are tested (files marked with a helper's name
 * are theirs to add, with this harness):
 *
 * | attack                                                                  | file |
 * |-------------------------------------------------------------------------|------|
 * | environment: process.env, /proc/{self,1,ppid,server}/environ, writes to env | env.test.ts |
 * | files: /etc, the data folder (SQLite, admin key, master key), another user's bundle, /proc, writes, links | files.test.ts |
 * | processes: spawn/exec/fork, workers, addons, inspector and SIGUSR1, kill (server, 1, 0, -1), renice, a fork bomb | processes.test.ts |
 * | infinite loop and hang, heap, exit/reallyExit/abort, console floods, huge emits, unhandled rejections, late throws | exhaustion.test.ts |
 * | prototype pollution, replaced JSON/Promise/process.emit, deleted globals, forged host messages, garbage on the descriptors | prototype.test.ts |
 * | the same as workflow steps: loop, heap, exit, flood, rejection, spawn, files, env; forged endings in the runner's journal | steps.test.ts |
 * | attacks as the module loads (refused at deploy)                          | deploy.test.ts |
 * | (the bystander check itself fails when the bystander is not served)      | harness.test.ts |
 * | IPC flood, raw stdout/stderr flood, a write past the journal's size bound | wire.test.ts (wire) |
 * | Buffers and native memory, admin ceilings on limits                      | resources.test.ts (limits) |
 * | deep request bodies                                                      | ingest.test.ts (ingest) |
 * | poison deliveries (a run that keeps killing its runner)                  | poison-delivery.test.ts (ingest) |
 * | network: loopback services, metadata addresses                           | network.test.ts (the lead) |
 *
 * Every attack here is contained and its test runs: none is skipped. An attack
 * found not contained is fixed with its test, never parked as a test that
 * cannot fail.
 *
 * The whole suite runs in about 25 s on a 2-core machine: keep hostile
 * sources' limits short (`timeout_seconds: 1`; the server's runs get 2 s and
 * 64 MB unless the file's harness says otherwise).
 */
import { expect } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

export interface HostileUser {
  id: string;
  key: string;
}

export interface HostileSource {
  id: string;
  endpoint_url: string;
  [field: string]: unknown;
}

export interface HostileWorkflow {
  id: string;
  trigger: { endpoint_url: string };
  steps: Array<{ id: string; name: string }>;
  [field: string]: unknown;
}

/** What an HTTP caller got: the status and the body (parsed when JSON). */
export interface EndpointAnswer {
  status: number;
  body: any;
}

/** One answer the bystander got while the attack ran; `error` when the request itself failed (refused, reset, no answer in 15 s). */
export interface BystanderAnswer {
  n: number;
  status: number;
  body: unknown;
  error?: string;
}

export interface SourceLimits {
  timeout_seconds?: number;
  memory_mb?: number;
}

export interface HostileHarness {
  server: TestServer;
  attacker: HostileUser;
  bystander: HostileUser;
  /** The bystander's own HTTP source: it answers `{ bystander: n }` for `?n=`. */
  bystanderSource: HostileSource;
  /** Deploys a source for the attacker; fails the test with the server's answer when refused. */
  deploySource(code: string, limits?: SourceLimits): Promise<HostileSource>;
  /** A workflow of the attacker: an HTTP trigger and one code step per string. */
  deployWorkflow(steps: string[]): Promise<HostileWorkflow>;
  /** POSTs to an endpoint (a source's or a workflow's); `query` is appended as is (`"?fault=x"`). */
  fire(target: HostileSource | HostileWorkflow, options?: { query?: string; json?: unknown }): Promise<EndpointAnswer>;
  /** Fires a hostileSource with `?attack`, or a hostileStep's workflow with `{ attack: true }`. */
  attack(target: HostileSource | HostileWorkflow): Promise<EndpointAnswer>;
  /** The owner's next call works: a hostileSource answers 200 { ok: true }; a hostileStep's workflow records a successful run. */
  expectOwnerRecovers(target: HostileSource | HostileWorkflow): Promise<void>;
  /** The bystander's stored events (newest first): each is `{ n }` of one of its requests, and nothing else may appear there. */
  bystanderEvents(): Promise<any[]>;
  /** The source's log lines, newest first. */
  logsOf(source: HostileSource): Promise<string[]>;
  /** The source's events (the bodies), newest first. */
  eventsOf(source: HostileSource): Promise<any[]>;
  /** Waits until the workflow's `$errors` has `count` entries and returns them (the `event.error` of each), newest first. */
  errorsOf(workflow: HostileWorkflow, count?: number): Promise<Array<{ code: string; msg: string; cellId: string; stack: string }>>;
  /** The workflow's runs, newest first. */
  runsOf(workflow: HostileWorkflow): Promise<any[]>;
  /** Runs `attack` while the bystander's source is hit one request after another; see the header. */
  whileAttacking<T>(attack: () => Promise<T>, load?: { minRequests?: number; pauseMs?: number }): Promise<{ outcome: T; bystander: BystanderAnswer[] }>;
  /** GET /healthz answers 200, and the bystander's source answers. */
  expectServerHealthy(): Promise<void>;
  close(): Promise<void>;
}

/** The bystander's source: it answers each request with its own `n`, so an answer cannot be someone else's. */
const BYSTANDER_CODE = `module.exports = {
  name: "Bystander", version: "1",
  props: { http: { type: "$.interface.http", customResponse: true } },
  async run(event) {
    this.http.respond({ status: 200, body: { bystander: Number(event.query.n) } });
    this.$emit({ n: Number(event.query.n) });
  },
};`;

/** An HTTP source whose `async run(event)` is `body` (CommonJS, so the body may `require`). */
export function runBody(body: string, name = "Hostile"): string {
  return `module.exports = {
  name: ${JSON.stringify(name)}, version: "1",
  props: { http: { type: "$.interface.http" } },
  async run(event) {
${body}
  },
};`;
}

/** As runBody, with customResponse: the body answers its caller with this.http.respond({ status, body }). */
export function respondingRunBody(body: string, name = "Hostile responder"): string {
  return `module.exports = {
  name: ${JSON.stringify(name)}, version: "1",
  props: { http: { type: "$.interface.http", customResponse: true } },
  async run(event) {
${body}
  },
};`;
}

/**
 * The usual hostile source: called with `?attack`, it runs `attack` (the body
 * of its async run(event); it may answer with this.http.respond to report
 * what it saw); called without, it answers 200 `{ ok: true }` and emits
 * `{ ok: true }`, which is how a test sees that its owner's next call works.
 */
export function hostileSource(attack: string): string {
  return respondingRunBody(`    if (event.query.attack !== undefined) {
${attack}
      return;
    }
    this.http.respond({ status: 200, body: { ok: true } });
    this.$emit({ ok: true });`);
}

/** The usual hostile step: with `{ attack: true }` in the trigger's body it runs `attack`, else it returns `{ ok: true }`. */
export function hostileStep(attack: string): string {
  return stepBody(`  if (steps.trigger.event.body && steps.trigger.event.body.attack) {
${attack}
  }
  return { ok: true };`);
}

/** A workflow code step whose `async run({ steps, $ })` is `body`. */
export function stepBody(body: string): string {
  return `export default defineComponent({ async run({ steps, $ }) {
${body}
} })`;
}

/**
 * Starts the server (limits short enough for hostile code: 2 s per HTTP run,
 * 64 MB heaps, unless `env` says otherwise), the two users and the
 * bystander's source.
 */
export async function startHostileHarness(env: Record<string, string> = {}): Promise<HostileHarness> {
  const server = await startTestServer({ RUNNEL_HTTP_TIMEOUT_SECONDS: "2", RUNNEL_MEMORY_MB: "64", ...env });
  try {
    const [attacker, bystander] = await Promise.all([createUser(server, "attacker"), createUser(server, "bystander")]);
    const bystanderSource = await deploySourceAs(server, bystander.key, { component_code: BYSTANDER_CODE, name: "bystander" });
    return harnessOf(server, attacker, bystander, bystanderSource);
  } catch (error) {
    await server.close();
    throw error;
  }
}

let deployed = 0;

function harnessOf(server: TestServer, attacker: HostileUser, bystander: HostileUser, bystanderSource: HostileSource): HostileHarness {
  const hitBystander = async (n: number): Promise<BystanderAnswer> => {
    try {
      const answer = await fetch(`${bystanderSource.endpoint_url}?n=${n}`, { method: "POST", signal: AbortSignal.timeout(15_000) });
      const text = await answer.text();
      return { n, status: answer.status, body: parseMaybe(text) };
    } catch (error) {
      return { n, status: 0, body: null, error: (error as Error).message };
    }
  };

  const harness: HostileHarness = {
    server,
    attacker,
    bystander,
    bystanderSource,

    deploySource(code, limits = {}) {
      deployed += 1;
      return deploySourceAs(server, attacker.key, { component_code: code, name: `hostile ${deployed}`, ...limits });
    },

    async deployWorkflow(steps) {
      deployed += 1;
      const created = await call(server.url, "POST", "/v1/workflows", {
        key: attacker.key,
        json: { name: `hostile ${deployed}`, trigger: { type: "http" }, steps: steps.map((code, index) => ({ name: `step_${index}`, code })) },
      });
      if (created.status !== 200) throw new Error(`creating the workflow failed: ${created.status} ${JSON.stringify(created.body)}`);
      return created.body.data;
    },

    async fire(target, options = {}) {
      const url = isWorkflow(target) ? target.trigger.endpoint_url : target.endpoint_url;
      const answer = await fetch(`${url}${options.query ?? ""}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(options.json ?? {}),
        signal: AbortSignal.timeout(60_000),
      });
      return { status: answer.status, body: parseMaybe(await answer.text()) };
    },

    attack(target) {
      return isWorkflow(target) ? harness.fire(target, { json: { attack: true } }) : harness.fire(target, { query: "?attack" });
    },

    async expectOwnerRecovers(target) {
      if (!isWorkflow(target)) {
        expect(await harness.fire(target)).toEqual({ status: 200, body: { ok: true } });
        return;
      }
      const before = (await harness.runsOf(target)).length;
      expect((await harness.fire(target, { json: { attack: false } })).status).toBe(200);
      const until = Date.now() + 30_000;
      for (;;) {
        const runs = await harness.runsOf(target);
        if (runs.length > before) {
          expect(runs[0]).toMatchObject({ status: "success", steps: [{ $return_value: { ok: true } }] });
          return;
        }
        if (Date.now() > until) throw new Error(`no new run of ${target.id} was recorded`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },

    async logsOf(source) {
      const listed = await call(server.url, "GET", `/v1/sources/${source.id}/logs?limit=100`, { key: attacker.key });
      if (listed.status !== 200) throw new Error(`listing logs failed: ${listed.status} ${JSON.stringify(listed.body)}`);
      return listed.body.data.map((log: { text: string }) => log.text);
    },

    async bystanderEvents() {
      const listed = await call(server.url, "GET", `/v1/sources/${bystanderSource.id}/event_summaries?expand=event&limit=100`, { key: bystander.key });
      if (listed.status !== 200) throw new Error(`listing the bystander's events failed: ${listed.status} ${JSON.stringify(listed.body)}`);
      return listed.body.data.map((item: { event: unknown }) => item.event);
    },

    async eventsOf(source) {
      const listed = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries?expand=event&limit=100`, { key: attacker.key });
      if (listed.status !== 200) throw new Error(`listing events failed: ${listed.status} ${JSON.stringify(listed.body)}`);
      return listed.body.data.map((item: { event: unknown }) => item.event);
    },

    async errorsOf(workflow, count = 1) {
      const until = Date.now() + 30_000;
      for (;;) {
        const listed = await call(server.url, "GET", `/v1/workflows/${workflow.id}/$errors/event_summaries?expand=event&limit=100`, { key: attacker.key });
        if (listed.status !== 200) throw new Error(`listing $errors failed: ${listed.status} ${JSON.stringify(listed.body)}`);
        if (listed.body.data.length >= count) return listed.body.data.map((item: any) => item.event.error);
        if (Date.now() > until) throw new Error(`waited for ${count} $errors of ${workflow.id}; found ${listed.body.data.length}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },

    async runsOf(workflow) {
      const listed = await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=100`, { key: attacker.key });
      if (listed.status !== 200) throw new Error(`listing runs failed: ${listed.status} ${JSON.stringify(listed.body)}`);
      return listed.body.data;
    },

    async whileAttacking(attack, load = {}) {
      const minRequests = load.minRequests ?? 3;
      const pauseMs = load.pauseMs ?? 20;
      const answers: BystanderAnswer[] = [];
      let attacking = true;
      const bystanderLoad = (async () => {
        for (let n = 1; attacking || answers.length < minRequests; n++) {
          answers.push(await hitBystander(n));
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
      })();
      try {
        const outcome = await attack();
        return { outcome, bystander: answers };
      } finally {
        attacking = false;
        await bystanderLoad;
      }
    },

    async expectServerHealthy() {
      expect((await call(server.url, "GET", "/healthz")).status).toBe(200);
      expectBystanderServed([await hitBystander(0)]);
    },

    close: () => server.close(),
  };
  return harness;
}

/** The bystander got answers, every one a 200 carrying its own request's number. */
export function expectBystanderServed(answers: BystanderAnswer[]): void {
  expect(answers.length).toBeGreaterThan(0);
  const wrong = answers.filter((answer) => answer.status !== 200 || (answer.body as { bystander?: number } | null)?.bystander !== answer.n);
  expect(wrong, "the bystander's answers that were not its own 200").toEqual([]);
}

async function deploySourceAs(server: TestServer, key: string, body: Record<string, unknown>): Promise<HostileSource> {
  const response = await call(server.url, "POST", "/v1/sources", { key, json: body });
  if (response.status !== 200) throw new Error(`deploy failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

function isWorkflow(target: HostileSource | HostileWorkflow): target is HostileWorkflow {
  return typeof (target as HostileWorkflow).trigger === "object" && (target as HostileWorkflow).trigger !== null;
}

function parseMaybe(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
