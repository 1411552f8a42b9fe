import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { DeployedSource, SavedComponent } from "../../src/domain/sources.js";
import type { RunStatus, Workflow, WorkflowRun } from "../../src/domain/workflows.js";
import type { Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function componentFor(ownerId: string): SavedComponent {
  const now = Date.now();
  return {
    id: newId("savedComponent"),
    ownerId,
    name: "c",
    version: "0.1.0",
    key: null,
    kind: "source",
    code: "export default {}",
    codeHash: `h-${ownerId}`,
    bundle: "module.exports = {}",
    bundleHash: `b-${ownerId}`,
    bundleMap: null,
    lock: null,
    manifest: { props: {}, methods: [], hooks: [], hasRun: true, hasAdditionalProps: false },
    createdAt: now,
    updatedAt: now,
  };
}

function sourceFor(ownerId: string, componentId: string, slug: string): DeployedSource {
  const now = Date.now();
  return {
    id: newId("deployedComponent"),
    ownerId,
    componentId,
    name: slug,
    nameSlug: slug,
    configuredProps: {},
    active: true,
    endpointToken: null,
    timer: null,
    nextTickAt: null,
    retention: 100,
    limits: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** A finished run of `workflow` that started at `startedAt` (its id made then, as the executor makes it). */
function runAt(workflow: Workflow, startedAt: number, status: RunStatus = "success"): WorkflowRun {
  return {
    id: newId("run", startedAt),
    ownerId: workflow.ownerId,
    workflowId: workflow.id,
    emitterId: workflow.id,
    eventId: `${startedAt}-${Math.floor(Math.random() * 1e6)}`,
    status,
    triggerEvent: {},
    steps: [],
    error: null,
    exitReason: null,
    replayOf: null,
    startedAt,
    finishedAt: startedAt + 5,
    durationMs: 5,
  };
}

/** What the console's lists and home page count: events kept per emitter, runs per workflow, activity per minute. */
export function describeActivityContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, activity counts: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
    let ownerId: string;
    let otherId: string;
    // Whole minutes, so that what falls in which minute is known exactly.
    const now = Math.floor(Date.now() / MINUTE) * MINUTE + 30_000;

    beforeEach(async () => {
      backend = await makeBackend();
      store = await backend.open();
      ownerId = (await store.createUser(newUserInput())).id;
      otherId = (await store.createUser(newUserInput())).id;
    });
    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    const deploy = async (owner: string, slug: string) => {
      const component = await store.saveComponent(componentFor(owner));
      return store.createSource(sourceFor(owner, component.id, slug), {});
    };
    const emitAt = (source: DeployedSource, at: number, count: number, channel = "") =>
      store.appendEvents({ ownerId: source.ownerId, emitterId: source.id, emits: Array.from({ length: count }, (_, n) => ({ event: { n }, name: channel })), dedupe: null, retention: 100, now: at });

    it("counts the events each emitter keeps and the newest one's time, only the owner's", async () => {
      const busy = await deploy(ownerId, "busy");
      const quiet = await deploy(ownerId, "quiet");
      const others = await deploy(otherId, "others");
      await emitAt(busy, now - 2 * MINUTE, 2);
      await emitAt(busy, now - MINUTE, 1, "alerts");
      await emitAt(others, now, 4);

      const stats = await store.eventStats(ownerId, [busy.id, quiet.id, others.id]);
      expect(stats.get(busy.id)).toEqual({ count: 3, lastMs: now - MINUTE });
      expect(stats.has(quiet.id)).toBe(false);
      expect(stats.has(others.id)).toBe(false);
      expect(await store.eventStats(ownerId, [])).toEqual(new Map());
    });

    it("counts each workflow's runs and failed runs since a time, and when its newest run started", async () => {
      const a = await store.createWorkflow(workflowFor(ownerId, "a"));
      const b = await store.createWorkflow(workflowFor(ownerId, "b"));
      const idle = await store.createWorkflow(workflowFor(ownerId, "idle"));
      const old = runAt(a, now - 30 * HOUR, "error");
      await store.finishRuns({
        runs: [old, runAt(a, now - HOUR), runAt(a, now - 2 * HOUR, "error"), runAt(b, now - 25 * HOUR)],
        deliveries: [],
        appends: [],
      });

      const stats = await store.runStats(ownerId, [a.id, b.id, idle.id], now - 24 * HOUR);
      expect(stats.get(a.id)).toEqual({ lastRunAt: now - HOUR, runs: 2, errors: 1 });
      // Ran, but not in the window.
      expect(stats.get(b.id)).toEqual({ lastRunAt: now - 25 * HOUR, runs: 0, errors: 0 });
      expect(stats.has(idle.id)).toBe(false);
      // Another owner asking for the same ids learns nothing.
      expect((await store.runStats(otherId, [a.id, b.id], now - 24 * HOUR)).size).toBe(0);
    });

    it("counts runs, failed runs and sources' events per minute since a time, and the workflows failing most", async () => {
      const feed = await deploy(ownerId, "feed");
      const others = await deploy(otherId, "others");
      const fine = await store.createWorkflow(workflowFor(ownerId, "fine"));
      const once = await store.createWorkflow(workflowFor(ownerId, "once"));
      const often = await store.createWorkflow(workflowFor(ownerId, "often"));
      const notMine = await store.createWorkflow(workflowFor(otherId, "not-mine"));
      const since = now - 30_000 - 4 * MINUTE;
      const minuteOf = (at: number) => Math.floor(at / MINUTE);

      await emitAt(feed, now - 10 * MINUTE, 5); // before the window
      await emitAt(feed, now - 2 * MINUTE, 3);
      await emitAt(feed, now, 1);
      await emitAt(feed, now + 1, 2, "$logs"); // log lines as events: not counted
      await emitAt(others, now, 7);
      await store.finishRuns({
        runs: [
          runAt(fine, now - 10 * MINUTE, "error"), // before the window
          runAt(fine, now - 3 * MINUTE),
          runAt(once, now - 3 * MINUTE, "error"),
          runAt(often, now - MINUTE, "error"),
          runAt(often, now, "error"),
          runAt(notMine, now, "error"),
        ],
        deliveries: [],
        appends: [],
      });

      const activity = await store.activity(ownerId, since);
      const byMinute = new Map(activity.minutes.map((counts) => [counts.minute, counts]));
      expect(byMinute.get(minuteOf(now - 3 * MINUTE))).toEqual({ minute: minuteOf(now - 3 * MINUTE), runs: 2, events: 0, errors: 1 });
      expect(byMinute.get(minuteOf(now - 2 * MINUTE))).toEqual({ minute: minuteOf(now - 2 * MINUTE), runs: 0, events: 3, errors: 0 });
      expect(byMinute.get(minuteOf(now - MINUTE))).toEqual({ minute: minuteOf(now - MINUTE), runs: 1, events: 0, errors: 1 });
      expect(byMinute.get(minuteOf(now))).toEqual({ minute: minuteOf(now), runs: 1, events: 1, errors: 1 });
      expect(byMinute.has(minuteOf(now - 10 * MINUTE))).toBe(false);
      expect(activity.failing).toEqual([
        { id: often.id, name: "often", errors: 2, lastErrorAt: now + 5 },
        { id: once.id, name: "once", errors: 1, lastErrorAt: now - 3 * MINUTE + 5 },
      ]);
    });
  });
}
