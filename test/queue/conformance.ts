import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ClaimedJob, JobQueue, LiveMessage, TimerJob, TimerTick } from "../../src/queue/job-queue.js";
import type { TimerSchedule } from "../../src/domain/sources.js";
import type { NewDelivery } from "../../src/store/store.js";

/** One adapter's backend for one test: every `open` is another "process" on the same queues. */
export interface QueueFixture {
  /**
   * A new instance on the shared backend. `leaseMs`: how long its claims
   * hold; its stall check (if any) runs often. `claimer`: its instance id
   * (default: one of its own). `renewClaims: false`: a holder frozen past
   * its leases (its claims are taken over while it lives).
   */
  open(options: { leaseMs: number; claimer?: string; renewClaims?: boolean }): Promise<JobQueue>;
  /** A delivery for the fixture's listener (rows the backend needs exist). */
  delivery(eventId: string, availableAt?: number): NewDelivery;
  /** A timer source on `schedule`, as deploy leaves it (the local adapter reads it from the store). */
  timer(schedule: TimerSchedule): Promise<TimerJob>;
  /** What undeploying the timer's source leaves in the backend, before the queue is told (the local adapter reads the store). */
  removeTimer(timer: TimerJob): Promise<void>;
  /** Removes the backend's data (obliterates the queues, drops the schema or the file). */
  dispose(): Promise<void>;
}

const LONG_LEASE = 60_000;

/** Leases short enough for a test to outlive; the adapters' stall checks run several times within one. */
const SHORT_LEASE = 1_000;

/**
 * Registers, in the describe block it is called in, a fixture made afresh
 * for each test and disposed of after it, with the instances the test opened
 * (closed first).
 */
export function fixturePerTest(makeFixture: () => Promise<QueueFixture>): {
  readonly fixture: QueueFixture;
  open(leaseMs: number, options?: { claimer?: string; renewClaims?: boolean }): Promise<JobQueue>;
} {
  let current: QueueFixture | null = null;
  const opened: JobQueue[] = [];
  beforeEach(async () => {
    current = await makeFixture();
  });
  afterEach(async () => {
    for (const queue of opened.splice(0)) await queue.close().catch(() => undefined);
    await current?.dispose();
    current = null;
  });
  const fixture = () => {
    if (!current) throw new Error("The queue fixture exists only while a test runs.");
    return current;
  };
  return {
    get fixture() {
      return fixture();
    },
    // Not a method of `this`: the tests take it out of the object.
    open: async (leaseMs, options = {}) => {
      const queue = await fixture().open({ leaseMs, ...options });
      opened.push(queue);
      return queue;
    },
  };
}

/** The JobQueue contract: every adapter must pass all of it. */
export function describeJobQueueConformance(name: string, makeFixture: () => Promise<QueueFixture>): void {
  describe(`JobQueue conformance: ${name}`, () => {
    const setup = fixturePerTest(makeFixture);
    const { open } = setup;

    it("runs an enqueued delivery once: a second enqueue of its key, waiting or running, adds nothing", async () => {
      const queue = await open(LONG_LEASE);
      const delivery = setup.fixture.delivery("1000-0");
      await queue.enqueue([delivery]);
      await queue.enqueue([delivery]);
      const claimed = await queue.claim(10);
      expect(claimed).toHaveLength(1);
      expect(claimed[0]).toMatchObject({ listenerId: delivery.listenerId, emitterId: delivery.emitterId, eventId: "1000-0", event: delivery.event, status: "running" });
      await queue.enqueue([delivery]);
      expect(await queue.claim(10)).toEqual([]);
      expect(await queue.complete(claimed)).toEqual([keyOf(delivery)]);
      expect(await queue.complete(claimed)).toEqual([]);
      expect(await queue.claim(10)).toEqual([]);
    });

    it("hands out due deliveries only: one enqueued for later waits until its time", async () => {
      const queue = await open(LONG_LEASE);
      await queue.enqueue([setup.fixture.delivery("1000-1", Date.now() + 800)]);
      expect(await queue.claim(10)).toEqual([]);
      const [job] = await claimWithin(queue, 5_000);
      expect(job!.eventId).toBe("1000-1");
    });

    it("retries a failed job after its delay, as a new attempt, and completes it once", async () => {
      const queue = await open(LONG_LEASE);
      const delivery = setup.fixture.delivery("1000-2");
      await queue.enqueue([delivery]);
      const [first] = await queue.claim(10);
      const failedAt = Date.now();
      expect(await queue.retry([first!], failedAt + 700)).toEqual([keyOf(delivery)]);
      expect(await queue.claim(10)).toEqual([]);
      const [again] = await claimWithin(queue, 5_000);
      expect(Date.now() - failedAt).toBeGreaterThanOrEqual(650);
      expect(again!.eventId).toBe("1000-2");
      expect(again!.attempts).toBeGreaterThan(first!.attempts);
      expect(await queue.complete([again!])).toEqual([keyOf(delivery)]);
      expect(await queue.claim(10)).toEqual([]);
    });

    it("hands deliveries queued together to one claim, each settled on its own: a second settle of one does nothing", async () => {
      const queue = await open(LONG_LEASE);
      const deliveries = ["4000-0", "4000-1", "4000-2"].map((eventId) => setup.fixture.delivery(eventId));
      await queue.enqueue(deliveries, { together: true });
      const claimed = await queue.claim(10);
      expect(claimed.map((job) => job.eventId).sort()).toEqual(["4000-0", "4000-1", "4000-2"]);
      expect(claimed.every((job) => job.status === "running" && job.attempts === 1)).toBe(true);
      expect(claimed.find((job) => job.eventId === "4000-1")?.event).toEqual(deliveries[1]!.event);
      const [first, ...rest] = claimed;
      expect(await queue.complete([first!])).toEqual([keyOf(first!)]);
      expect(await queue.complete([first!])).toEqual([]);
      expect(await queue.claim(10)).toEqual([]);
      expect((await queue.complete(rest)).map((key) => key.eventId).sort()).toEqual(rest.map((job) => job.eventId).sort());
      expect(await queue.claim(10)).toEqual([]);
      expect(await queue.stats(Date.now())).toMatchObject({ waiting: 0, running: 0 });
    });

    it("puts one delivery of several back alone, as a new attempt, while the others complete", async () => {
      const queue = await open(LONG_LEASE);
      const deliveries = ["4100-0", "4100-1"].map((eventId) => setup.fixture.delivery(eventId));
      await queue.enqueue(deliveries, { together: true });
      const claimed = await queue.claim(10);
      const failing = claimed.find((job) => job.eventId === "4100-0")!;
      const fine = claimed.find((job) => job.eventId === "4100-1")!;
      const failedAt = Date.now();
      expect(await queue.retry([failing], failedAt + 700)).toEqual([keyOf(failing)]);
      expect(await queue.complete([fine])).toEqual([keyOf(fine)]);
      expect(await queue.claim(10)).toEqual([]);
      const [again] = await claimWithin(queue, 5_000);
      expect(Date.now() - failedAt).toBeGreaterThanOrEqual(650);
      expect(again!.eventId).toBe("4100-0");
      expect(again!.attempts).toBeGreaterThan(failing.attempts);
      expect(await queue.complete([again!])).toEqual([keyOf(failing)]);
      expect(await queue.claim(10)).toEqual([]);
    });

    it("takes over a claim of several from a dead worker: what it had not settled runs again (at least once), and completes once", async () => {
      const dying = await open(SHORT_LEASE);
      const survivor = await open(SHORT_LEASE);
      const deliveries = ["4200-0", "4200-1", "4200-2"].map((eventId) => setup.fixture.delivery(eventId));
      await dying.enqueue(deliveries, { together: true });
      const held = await dying.claim(10);
      expect(held).toHaveLength(3);
      const settled = held.find((job) => job.eventId === "4200-0")!;
      expect(await dying.complete([settled])).toEqual([keyOf(settled)]);
      await dying.close();
      const taken = await claimAllWithin(survivor, 2, 15_000);
      const ids = taken.map((job) => job.eventId);
      expect(ids).toEqual(expect.arrayContaining(["4200-1", "4200-2"]));
      expect(taken.filter((job) => job.eventId !== "4200-0").every((job) => job.interruptions >= 1)).toBe(true);
      expect((await survivor.complete(taken)).length).toBe(taken.length);
      await sleep(SHORT_LEASE * 2);
      expect(await survivor.claim(10)).toEqual([]);
    });

    it("hurries a job put back for later: due at once, a held or unknown one left alone", async () => {
      const queue = await open(LONG_LEASE);
      const delivery = setup.fixture.delivery("1000-h");
      await queue.enqueue([delivery]);
      const [first] = await queue.claim(10);
      // Held by its claim: nothing to hurry yet.
      expect(await queue.hurry([keyOf(delivery)])).toBe(0);
      await queue.retry([first!], Date.now() + LONG_LEASE);
      expect(await queue.claim(10)).toEqual([]);
      expect(await queue.hurry([keyOf(delivery), keyOf(setup.fixture.delivery("1000-unknown"))])).toBe(1);
      const [again] = await claimWithin(queue, 5_000);
      expect(again!.eventId).toBe("1000-h");
      expect(again!.attempts).toBeGreaterThan(first!.attempts);
      expect(await queue.complete([again!])).toEqual([keyOf(delivery)]);
    });

    it("takes over the claim of a dead worker once its lease runs out, and completes it once", async () => {
      const dying = await open(SHORT_LEASE);
      const survivor = await open(SHORT_LEASE);
      const delivery = setup.fixture.delivery("1000-3");
      await dying.enqueue([delivery]);
      const [held] = await dying.claim(10);
      expect(held!.eventId).toBe("1000-3");
      await dying.close();
      const [taken] = await claimWithin(survivor, 15_000);
      expect(taken!.eventId).toBe("1000-3");
      expect(taken!.interruptions).toBeGreaterThanOrEqual(1);
      expect(await survivor.complete([taken!])).toEqual([keyOf(delivery)]);
      await sleep(SHORT_LEASE * 2);
      expect(await survivor.claim(10)).toEqual([]);
    });

    it("never lets two claimers both have or complete one job", async () => {
      const one = await open(LONG_LEASE);
      const two = await open(LONG_LEASE);
      const deliveries = Array.from({ length: 20 }, (_, i) => setup.fixture.delivery(`2000-${i}`));
      await one.enqueue(deliveries);
      const [a, b] = await Promise.all([one.claim(20), two.claim(20)]);
      const ids = [...a, ...b].map((job) => job.eventId);
      expect(new Set(ids).size).toBe(ids.length);
      // Both asked at once; whatever one of them did not get, a second round gets.
      const rest = [...(await one.claim(20)), ...(await two.claim(20))];
      expect(new Set([...ids, ...rest.map((job) => job.eventId)]).size).toBe(20);
      const completed = await Promise.all([one.complete(a), two.complete(b), one.complete(rest), two.complete(rest)]);
      expect(completed.flat()).toHaveLength(20);
    });

    it("keeps a claim its holder renews past its lease from others, and gives it to another soon after the holder stops renewing", async () => {
      const holder = await open(SHORT_LEASE);
      const other = await open(SHORT_LEASE);
      const delivery = setup.fixture.delivery("1000-6");
      await holder.enqueue([delivery]);
      const [held] = await holder.claim(10);
      expect(held!.eventId).toBe("1000-6");
      // Three leases and more: the other instance's claims (and its stall checks) find nothing to take.
      const until = Date.now() + SHORT_LEASE * 3.5;
      while (Date.now() < until) {
        expect(await other.claim(10)).toEqual([]);
        await sleep(100);
      }
      // Dropped without settling: the renewals stop, and the lease runs out one lease later.
      await holder.close();
      const [taken] = await claimWithin(other, 15_000);
      expect(taken!.eventId).toBe("1000-6");
      expect(taken!.interruptions).toBeGreaterThanOrEqual(1);
      expect(await holder.complete([held!])).toEqual([]);
      expect(await other.complete([taken!])).toEqual([keyOf(delivery)]);
    });

    it("lets a holder that renewed past its lease settle its claim", async () => {
      const holder = await open(SHORT_LEASE);
      const other = await open(SHORT_LEASE);
      const deliveries = [setup.fixture.delivery("1000-7"), setup.fixture.delivery("1000-8")];
      await holder.enqueue(deliveries);
      const held = await holder.claim(10);
      expect(held).toHaveLength(2);
      const until = Date.now() + SHORT_LEASE * 3;
      while (Date.now() < until) {
        expect(await other.claim(10)).toEqual([]);
        await sleep(100);
      }
      const byId = (eventId: string) => held.find((job) => job.eventId === eventId)!;
      expect(await holder.complete([byId("1000-7")])).toEqual([keyOf(deliveries[0]!)]);
      expect(await holder.retry([byId("1000-8")], Date.now() + LONG_LEASE)).toEqual([keyOf(deliveries[1]!)]);
    });

    it("takes back at once what an instance held before it was dropped, when it opens again with the same id", async () => {
      const claimer = `instance-restarted-${Math.random().toString(36).slice(2)}`;
      const first = await open(LONG_LEASE, { claimer });
      const deliveries = [setup.fixture.delivery("1000-9"), setup.fixture.delivery("1000-10")];
      await first.enqueue(deliveries);
      const held = await first.claim(10);
      expect(held).toHaveLength(2);
      // Dropped mid-run: nothing settled, its leases (a minute) still run.
      await first.close();
      const peer = await open(LONG_LEASE);
      expect(await peer.claim(10)).toEqual([]);
      // A peer's "own" is not this instance's: it takes nothing back.
      expect(await peer.takeBackInterrupted("own")).toBe(0);
      const again = await open(LONG_LEASE, { claimer });
      expect(await again.takeBackInterrupted("own")).toBe(2);
      const back = await again.claim(10);
      expect(back.map((job) => job.eventId).sort()).toEqual(["1000-10", "1000-9"]);
      expect(back.every((job) => job.interruptions >= 1)).toBe(true);
      expect(await first.complete(held)).toEqual([]);
      expect((await again.complete(back)).length).toBe(2);
      expect(await again.takeBackInterrupted("own")).toBe(0);
    });

    it("tells its depth: jobs waiting (due or later), jobs held, and the oldest waiting one's age", async () => {
      const queue = await open(LONG_LEASE);
      expect(await queue.stats(Date.now())).toEqual({ waiting: 0, running: 0, oldestWaitMs: 0 });
      const recordedAt = Date.now() - 5_000;
      const old = { ...setup.fixture.delivery("3000-0"), createdAt: recordedAt, indexedAtMs: recordedAt };
      const later = setup.fixture.delivery("3000-2", Date.now() + 3_600_000);
      await queue.enqueue([old, setup.fixture.delivery("3000-1"), later]);
      const waiting = await queue.stats(Date.now());
      expect(waiting).toMatchObject({ waiting: 3, running: 0 });
      expect(waiting.oldestWaitMs).toBeGreaterThanOrEqual(5_000);
      const claimed = await queue.claim(10);
      expect(claimed.map((job) => job.eventId).sort()).toEqual(["3000-0", "3000-1"]);
      const running = await queue.stats(Date.now());
      expect(running).toMatchObject({ waiting: 1, running: 2 });
      // The one left waits for later, recorded just now: younger than the one claimed.
      expect(running.oldestWaitMs).toBeLessThan(5_000);
      expect(await queue.complete(claimed)).toHaveLength(2);
      expect(await queue.stats(Date.now())).toMatchObject({ waiting: 1, running: 0 });
    });

    it("refuses to complete or retry a claim taken over by another worker (a slow worker, not a dead one)", async () => {
      // Frozen past its leases (a long pause): its renewals do not come.
      const slow = await open(SHORT_LEASE, { renewClaims: false });
      const other = await open(SHORT_LEASE);
      const deliveries = [setup.fixture.delivery("1000-4"), setup.fixture.delivery("1000-5")];
      await slow.enqueue(deliveries);
      const stale = await slow.claim(10);
      expect(stale).toHaveLength(2);
      const fresh = await claimAllWithin(other, 2, 15_000);
      expect(fresh.map((job) => job.eventId).sort()).toEqual(["1000-4", "1000-5"]);
      const staleOf = (eventId: string) => stale.find((job) => job.eventId === eventId)!;
      expect(await slow.complete([staleOf("1000-4")])).toEqual([]);
      expect(await slow.retry([staleOf("1000-5")], Date.now())).toEqual([]);
      expect((await other.complete(fresh)).length).toBe(2);
      expect(await other.claim(10)).toEqual([]);
    });

    it("ticks a timer once per interval with two instances attached, and stops when unscheduled", async () => {
      const timer = await setup.fixture.timer({ intervalSeconds: 1, cron: null });
      const ticks: Array<TimerTick & { by: string }> = [];
      const one = await open(LONG_LEASE);
      const two = await open(LONG_LEASE);
      await one.onTimerTick(async (tick) => void ticks.push({ ...tick, by: "one" }));
      await two.onTimerTick(async (tick) => void ticks.push({ ...tick, by: "two" }));
      await one.scheduleTimer(timer);
      await two.scheduleTimer(timer); // both processes saw the deploy: still one schedule
      await sleep(4_600);
      await setup.fixture.removeTimer(timer);
      await one.unscheduleTimer(timer.sourceId);
      const seen = ticks.length;
      const dueTimes = ticks.map((tick) => tick.dueAt).sort((x, y) => x - y);
      expect(new Set(dueTimes).size).toBe(dueTimes.length);
      expect(seen).toBeGreaterThanOrEqual(3);
      expect(seen).toBeLessThanOrEqual(5);
      for (let i = 1; i < dueTimes.length; i++) expect(dueTimes[i]! - dueTimes[i - 1]!).toBeGreaterThanOrEqual(900);
      expect(ticks.every((tick) => tick.sourceId === timer.sourceId && tick.ownerId === timer.ownerId)).toBe(true);
      await sleep(2_000);
      expect(ticks.length).toBeLessThanOrEqual(seen + 1); // a tick already due when it was removed may still run
    });

    it("ticks a cron timer on its pattern (every second, six fields), once per due time", async () => {
      const timer = await setup.fixture.timer({ intervalSeconds: null, cron: "* * * * * *", timezone: "UTC" });
      const ticks: TimerTick[] = [];
      const one = await open(LONG_LEASE);
      const two = await open(LONG_LEASE);
      await one.onTimerTick(async (tick) => void ticks.push(tick));
      await two.onTimerTick(async (tick) => void ticks.push(tick));
      await one.scheduleTimer(timer);
      await sleep(3_600);
      await setup.fixture.removeTimer(timer);
      await one.unscheduleTimer(timer.sourceId);
      const dueTimes = ticks.map((tick) => tick.dueAt);
      expect(new Set(dueTimes).size).toBe(dueTimes.length);
      expect(dueTimes.length).toBeGreaterThanOrEqual(2);
      // On the pattern: whole seconds.
      expect(dueTimes.every((dueAt) => dueAt % 1000 === 0)).toBe(true);
    });

    it("hands the ticks to the other instances once one stops taking them (a process stopping)", async () => {
      const timer = await setup.fixture.timer({ intervalSeconds: 1, cron: null });
      const ticks: Array<TimerTick & { by: string }> = [];
      const one = await open(LONG_LEASE);
      const two = await open(LONG_LEASE);
      const stopOne = await one.onTimerTick(async (tick) => void ticks.push({ ...tick, by: "one" }));
      await two.onTimerTick(async (tick) => void ticks.push({ ...tick, by: "two" }));
      await one.scheduleTimer(timer);
      await stopOne();
      const before = ticks.length;
      await sleep(3_600);
      await setup.fixture.removeTimer(timer);
      await one.unscheduleTimer(timer.sourceId);
      const after = ticks.slice(before);
      expect(after.length).toBeGreaterThanOrEqual(2);
      expect(after.every((tick) => tick.by === "two")).toBe(true);
    });

    it("lists the timers it keeps, with their schedules as given (none for the local adapter: the schedule is the source's row)", async () => {
      const queue = await open(LONG_LEASE);
      // One at a time: a fixture's timer sources share a name.
      for (const schedule of [{ intervalSeconds: 3600, cron: null }, { intervalSeconds: null, cron: "0 9 * * 1", timezone: "Europe/Paris" }]) {
        const timer = await setup.fixture.timer(schedule);
        await queue.scheduleTimer(timer);
        const kept = queue.kind === "local" ? [] : [{ sourceId: timer.sourceId, ownerId: timer.ownerId, schedule }];
        expect(await queue.scheduledTimers()).toEqual(kept);
        expect(await queue.scheduledTimer(timer.sourceId)).toEqual(kept[0] ?? null);
        await setup.fixture.removeTimer(timer);
        await queue.unscheduleTimer(timer.sourceId);
        expect(await queue.scheduledTimer(timer.sourceId)).toBeNull();
        expect(await queue.scheduledTimers()).toEqual([]);
      }
    });

    it("loses only the tick whose handler failed: the next one comes as planned", async () => {
      const timer = await setup.fixture.timer({ intervalSeconds: 1, cron: null });
      const handled: number[] = [];
      let failures = 0;
      const queue = await open(LONG_LEASE);
      await queue.onTimerTick(async (tick) => {
        if (failures++ === 0) throw new Error("the source's run could not start");
        handled.push(tick.dueAt);
      });
      await queue.scheduleTimer(timer);
      await waitFor(() => handled.length >= 1, 6_000);
      await setup.fixture.removeTimer(timer);
      await queue.unscheduleTimer(timer.sourceId);
      expect(failures).toBeGreaterThanOrEqual(2);
    });

    it("carries a live message to every subscriber of its channel in every instance, once", async () => {
      const one = await open(LONG_LEASE);
      const two = await open(LONG_LEASE);
      const got: Array<[string, LiveMessage]> = [];
      const offOne = await one.subscribe("dc_live", (message) => got.push(["one", message]));
      await two.subscribe("dc_live", (message) => got.push(["two", message]));
      await two.subscribe("dc_other", (message) => got.push(["other", message]));
      const message: LiveMessage = { kind: "event", channel: "", item: { id: "1-0", event: { n: 1 } } };
      await two.publish("dc_live", message);
      await waitFor(() => got.length >= 2, 5_000);
      await sleep(200);
      expect(got.sort()).toEqual([["one", message], ["two", message]]);
      await offOne();
      await one.publish("dc_live", { kind: "closed", reason: "deleted" });
      await waitFor(() => got.length >= 3, 5_000);
      await sleep(200);
      expect(got.slice(2)).toEqual([["two", { kind: "closed", reason: "deleted" }]]);
    });
  });
}

function keyOf(delivery: NewDelivery) {
  return { listenerId: delivery.listenerId, emitterId: delivery.emitterId, eventId: delivery.eventId };
}

/** Claims until something comes (a retry's delay, a lease running out), or fails after `timeoutMs`. */
async function claimWithin(queue: JobQueue, timeoutMs: number): Promise<ClaimedJob[]> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const claimed = await queue.claim(10);
    if (claimed.length > 0) return claimed;
    await sleep(100);
  }
  throw new Error(`nothing could be claimed within ${timeoutMs} ms`);
}

/** Claims until `count` jobs came, or fails after `timeoutMs`. */
async function claimAllWithin(queue: JobQueue, count: number, timeoutMs: number): Promise<ClaimedJob[]> {
  const until = Date.now() + timeoutMs;
  const claimed: ClaimedJob[] = [];
  while (claimed.length < count) {
    if (Date.now() > until) throw new Error(`${claimed.length} of ${count} jobs claimed within ${timeoutMs} ms`);
    claimed.push(...(await queue.claim(count - claimed.length)));
    if (claimed.length < count) await sleep(100);
  }
  return claimed;
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`not reached within ${timeoutMs} ms`);
    await sleep(25);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
