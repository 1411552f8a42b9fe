import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConflictError } from "../../src/domain/errors.js";
import { newId } from "../../src/domain/ids.js";
import { parsePageRequest } from "../../src/domain/paging.js";
import type { DeployedSource, SavedComponent } from "../../src/domain/sources.js";
import type { Store } from "../../src/store/store.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";

function componentFor(ownerId: string, code = "export default {}"): SavedComponent {
  const now = Date.now();
  return {
    id: newId("savedComponent"),
    ownerId,
    name: "c",
    version: "0.1.0",
    key: "my-source",
    kind: "source",
    code,
    codeHash: `h-${code.length}`,
    bundle: "module.exports = {}",
    bundleHash: `b-${code.length}`,
    bundleMap: null,
    lock: null,
    manifest: { props: {}, methods: [], hooks: [], hasRun: true, hasAdditionalProps: false },
    createdAt: now,
    updatedAt: now,
  };
}

function sourceFor(ownerId: string, componentId: string, slug: string, overrides: Partial<DeployedSource> = {}): DeployedSource {
  const now = Date.now();
  return {
    id: newId("deployedComponent"),
    ownerId,
    componentId,
    name: slug,
    nameSlug: slug,
    configuredProps: { a: 1 },
    active: true,
    endpointToken: null,
    timer: null,
    nextTickAt: null,
    retention: 100,
    limits: null,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

/** The sources half of the Store contract. */
export function describeSourceContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, sources and events: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
    let ownerId: string;
    let otherId: string;
    let source: DeployedSource;

    beforeEach(async () => {
      backend = await makeBackend();
      store = await backend.open();
      ownerId = (await store.createUser(newUserInput())).id;
      otherId = (await store.createUser(newUserInput())).id;
      const component = await store.saveComponent(componentFor(ownerId));
      source = await store.createSource(sourceFor(ownerId, component.id, "my-source"), { count: 1 });
    });
    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    it("saves a component once per code and finds it by id or key, for its owner only", async () => {
      const again = await store.saveComponent(componentFor(ownerId));
      const first = await store.findComponent(ownerId, "my-source");
      expect(again.id).toBe(first!.id);
      expect(await store.findComponent(ownerId, first!.id)).toEqual(first);
      expect(await store.findComponent(otherId, first!.id)).toBeNull();
      const newer = await store.saveComponent(componentFor(ownerId, "export default { changed: true }"));
      expect((await store.findComponent(ownerId, "my-source"))!.id).toBe(newer.id);
    });

    it("keeps a component's source map, and gives one saved without a map its map when the same bundle is saved again", async () => {
      const map = JSON.stringify({ version: 3, sources: ["component.ts"], names: [], mappings: "AAAA" });
      // The component of beforeEach was saved with no map, as components saved before maps were kept.
      const again = await store.saveComponent({ ...componentFor(ownerId), bundleMap: map });
      expect(again.id).toBe((await store.findComponent(ownerId, "my-source"))!.id);
      expect(again.bundleMap).toBe(map);
      expect((await store.findComponent(ownerId, again.id))!.bundleMap).toBe(map);
      // A map is never replaced by another: the same bundle has the same map.
      expect((await store.saveComponent({ ...componentFor(ownerId), bundleMap: "{}" })).bundleMap).toBe(map);
    });

    it("keeps a component's package lock and finds the newest component with the same code", async () => {
      const lock = {
        packages: { "leftpad@1.2.3": { integrity: "sha512-AAAA", tarball: "http://registry/leftpad/-/leftpad-1.2.3.tgz", dependencies: {} } },
        roots: { "leftpad@^1": "leftpad@1.2.3" },
      };
      const code = "import leftpad from 'leftpad@^1'; export default {}";
      const saved = await store.saveComponent({ ...componentFor(ownerId, code), codeHash: "h-lock", lock });
      expect((await store.findComponent(ownerId, saved.id))!.lock).toEqual(lock);
      expect((await store.findComponentByCode(ownerId, "h-lock"))!.id).toBe(saved.id);
      expect(await store.findComponentByCode(otherId, "h-lock")).toBeNull();
      expect(await store.findComponentByCode(ownerId, "h-none")).toBeNull();
      expect((await store.findComponentByCode(ownerId, `h-${"export default {}".length}`))!.lock).toBeNull();
    });

    it("finds sources by id, slug and endpoint, scoped by owner", async () => {
      expect(await store.findSource(ownerId, source.id)).toEqual(source);
      expect(await store.findSource(ownerId, "my-source")).toEqual(source);
      expect(await store.findSource(otherId, source.id)).toBeNull();
      const withEndpoint = await store.createSource(sourceFor(ownerId, source.componentId, "hook", { endpointToken: "tok123" }), {});
      expect((await store.findSourceByEndpoint("tok123"))!.id).toBe(withEndpoint.id);
      expect(await store.findSourceByEndpoint("nope")).toBeNull();
    });

    it("keeps slugs unique per owner", async () => {
      await expect(store.createSource(sourceFor(ownerId, source.componentId, "my-source"), {})).rejects.toBeInstanceOf(ConflictError);
      await store.createSource(sourceFor(ownerId, source.componentId, "my-source-1"), {});
      await store.createSource(sourceFor(ownerId, source.componentId, "my-sourcex"), {});
      expect([...(await store.takenSlugs(ownerId, "my-source"))].sort()).toEqual(["my-source", "my-source-1"]);
      const otherComponent = await store.saveComponent(componentFor(otherId));
      await store.createSource(sourceFor(otherId, otherComponent.id, "my-source"), {});
    });

    it("updates, reads the key-value store, lists and deletes", async () => {
      expect(await store.readSourceDb(ownerId, source.id)).toEqual({ count: 1 });
      await store.updateSource({ ...source, name: "renamed", nameSlug: "renamed", active: false }, { count: 2 });
      expect(await store.findSource(ownerId, "renamed")).toMatchObject({ id: source.id, active: false });
      expect(await store.readSourceDb(ownerId, source.id)).toEqual({ count: 2 });
      await store.updateSource({ ...source, ownerId: otherId, name: "stolen", nameSlug: "stolen" });
      expect((await store.findSource(ownerId, source.id))!.name).toBe("renamed");
      expect((await store.listSources(ownerId, parsePageRequest({}))).items.map((s) => s.id)).toEqual([source.id]);
      expect(await store.deleteSource(otherId, source.id)).toBe(false);
      expect(await store.deleteSource(ownerId, source.id)).toBe(true);
      expect(await store.findSource(ownerId, source.id)).toBeNull();
    });

    it("appends events with ordered ids, dedupes, trims per channel, and writes the key-value store", async () => {
      const emits = Array.from({ length: 12 }, (_, i) => ({ event: { i }, id: i, summary: `#${i}` }));
      const first = await store.appendEvents({ ownerId, emitterId: source.id, emits, dedupe: "unique", retention: 10, now: 1_000, sourceDb: { count: 3 } });
      expect(first.events.map((e) => e.id)).toEqual(Array.from({ length: 12 }, (_, i) => `1000-${i}`));
      expect(await store.readSourceDb(ownerId, source.id)).toEqual({ count: 3 });

      const again = await store.appendEvents({ ownerId, emitterId: source.id, emits: [{ event: {}, id: 3 }, { event: {}, id: 99 }], dedupe: "unique", retention: 10, now: 900 });
      expect(again.events.map((e) => e.emitId)).toEqual(["99"]);
      expect(again.events[0]!.id).toBe("1000-12"); // the clock went back: ids still grow

      await store.appendEvents({ ownerId, emitterId: source.id, emits: [{ event: { x: 1 }, name: "other" }], dedupe: null, retention: 10, now: 2_000 });
      const page = await store.listEvents(ownerId, source.id, { channel: "", page: parsePageRequest({ limit: 100 }) });
      expect(page.totalCount).toBe(10);
      expect(page.items[0]!.id).toBe("1000-12");
      expect(page.items.at(-1)!.id).toBe("1000-3");
      expect((await store.listEvents(ownerId, source.id, { channel: "other", page: parsePageRequest({}) })).items).toHaveLength(1);
      expect((await store.listEvents(ownerId, source.id, { page: parsePageRequest({}) })).totalCount).toBe(11);
      expect((await store.listEvents(otherId, source.id, { page: parsePageRequest({}) })).totalCount).toBe(0);
    });

    it("pages events by id cursor, with seq past 9 sorting numerically", async () => {
      const emits = Array.from({ length: 15 }, (_, i) => ({ event: i }));
      await store.appendEvents({ ownerId, emitterId: source.id, emits, dedupe: null, retention: 100, now: 5_000 });
      const first = await store.listEvents(ownerId, source.id, { page: parsePageRequest({ limit: 4 }) });
      expect(first.items.map((e) => e.event)).toEqual([14, 13, 12, 11]);
      const next = await store.listEvents(ownerId, source.id, { page: parsePageRequest({ limit: 4, after: first.items[3]!.id }) });
      expect(next.items.map((e) => e.event)).toEqual([10, 9, 8, 7]);
      const back = await store.listEvents(ownerId, source.id, { page: parsePageRequest({ limit: 4, before: next.items[0]!.id }) });
      expect(back.items.map((e) => e.event)).toEqual([14, 13, 12, 11]);
    });

    it("deletes events in an inclusive range, or all", async () => {
      await store.appendEvents({ ownerId, emitterId: source.id, emits: [1, 2, 3, 4].map((event) => ({ event })), dedupe: null, retention: 100, now: 7_000 });
      expect(await store.deleteEvents(otherId, source.id, {})).toBe(0);
      expect(await store.deleteEvents(ownerId, source.id, { startId: "7000-1", endId: "7000-2" })).toBe(2);
      const left = await store.listEvents(ownerId, source.id, { page: parsePageRequest({}) });
      expect(left.items.map((e) => e.event)).toEqual([4, 1]);
      expect(await store.deleteEvents(ownerId, source.id, {})).toBe(2);
    });

    it("deletes the events of one channel only when asked, the default channel as \"\"", async () => {
      await store.appendEvents({ ownerId, emitterId: source.id, emits: [{ event: 1 }, { event: 2, name: "alerts" }, { event: 3 }, { event: 4, name: "alerts" }], dedupe: null, retention: 100, now: 8_000 });
      expect(await store.deleteEvents(ownerId, source.id, { channel: "alerts" })).toBe(2);
      expect((await store.listEvents(ownerId, source.id, { page: parsePageRequest({}) })).items.map((e) => e.event)).toEqual([3, 1]);
      expect(await store.deleteEvents(ownerId, source.id, { channel: "" })).toBe(2);
      expect((await store.listEvents(ownerId, source.id, { page: parsePageRequest({}) })).totalCount).toBe(0);
    });

    it("trims each channel to its retention by count: after a deletion by hand, and when the retention is lowered", async () => {
      const totals = async (channel: string) => (await store.listEvents(ownerId, source.id, { channel, page: parsePageRequest({ limit: 100 }) })).totalCount;
      for (let round = 0; round < 5; round++) {
        const emits = Array.from({ length: 5 }, (_, i) => ({ event: round * 5 + i }));
        await store.appendEvents({ ownerId, emitterId: source.id, emits: [...emits, { event: round, name: "side" }], dedupe: null, retention: 10, now: 10_000 + round });
        expect(await totals("")).toBe(Math.min(10, (round + 1) * 5));
      }
      expect(await totals("side")).toBe(5);
      let kept = await store.listEvents(ownerId, source.id, { channel: "", page: parsePageRequest({ limit: 100 }) });
      expect(kept.items.map((e) => e.event)).toEqual([24, 23, 22, 21, 20, 19, 18, 17, 16, 15]);
      // Deleted by hand (three of "" and the "side" event between them), the counts are not known any
      // more: the next append counts, and trims to exactly 10.
      expect(await store.deleteEvents(ownerId, source.id, { startId: kept.items[5]!.id, endId: kept.items[3]!.id })).toBe(4);
      await store.appendEvents({ ownerId, emitterId: source.id, emits: [25, 26, 27, 28, 29].map((event) => ({ event })), dedupe: null, retention: 10, now: 11_000 });
      kept = await store.listEvents(ownerId, source.id, { channel: "", page: parsePageRequest({ limit: 100 }) });
      expect(kept.items.map((e) => e.event)).toEqual([29, 28, 27, 26, 25, 24, 23, 22, 18, 17]);
      // A lower retention takes effect at the next append.
      await store.appendEvents({ ownerId, emitterId: source.id, emits: [{ event: 30 }], dedupe: null, retention: 4, now: 12_000 });
      expect(await totals("")).toBe(4);
      expect(await totals("side")).toBe(4);
    });

    it("trims to the retention when one append brings more than it keeps (fewer old events than must go): the newest stay", async () => {
      await store.appendEvents({ ownerId, emitterId: source.id, emits: [{ event: 0 }], dedupe: null, retention: 3, now: 13_000 });
      // The count is known now; this append brings six, of which three stay, and the old one goes.
      await store.appendEvents({ ownerId, emitterId: source.id, emits: [1, 2, 3, 4, 5, 6].map((event) => ({ event })), dedupe: null, retention: 3, now: 13_001 });
      const kept = await store.listEvents(ownerId, source.id, { channel: "", page: parsePageRequest({ limit: 100 }) });
      expect(kept.items.map((e) => e.event)).toEqual([6, 5, 4]);
      // And the count it kept is right: one more keeps three still.
      await store.appendEvents({ ownerId, emitterId: source.id, emits: [{ event: 7 }], dedupe: null, retention: 3, now: 13_002 });
      expect((await store.listEvents(ownerId, source.id, { channel: "", page: parsePageRequest({ limit: 100 }) })).items.map((e) => e.event)).toEqual([7, 6, 5]);
    });

    it("takes appends to one emitter one at a time: ids and counts stay right when they come together", async () => {
      const appends = Array.from({ length: 8 }, (_, round) =>
        store.appendEvents({ ownerId, emitterId: source.id, emits: [0, 1, 2].map((i) => ({ event: round * 3 + i })), dedupe: null, retention: 20, now: 30_000, logs: [{ stream: "stdout", text: `round ${round}`, ts: 30_000 }] }),
      );
      const results = await Promise.all(appends);
      const ids = results.flatMap((result) => result.events.map((event) => event.id));
      expect(new Set(ids).size).toBe(24);
      expect((await store.listEvents(ownerId, source.id, { page: parsePageRequest({ limit: 100 }) })).totalCount).toBe(20);
      expect(new Set(results.flatMap((result) => result.logs.map((log) => log.id))).size).toBe(8);
    });

    it("writes log lines with events in one append, and keeps an emitter's newest 1000 lines", async () => {
      const appended = await store.appendEvents({
        ownerId,
        emitterId: source.id,
        emits: [{ event: 1 }],
        dedupe: null,
        retention: 10,
        now: 20,
        logs: [
          { stream: "stdout", text: "first", ts: 20 },
          { stream: "system", text: "second", ts: 20 },
        ],
      });
      expect(appended.logs.map((l) => [l.id, l.text, l.stream])).toEqual([["20-0", "first", "stdout"], ["20-1", "second", "system"]]);
      expect(appended.events).toHaveLength(1);
      for (let chunk = 0; chunk < 12; chunk++) {
        await store.appendLogs(ownerId, source.id, Array.from({ length: 100 }, (_, i) => ({ stream: "stdout" as const, text: `line ${chunk * 100 + i}`, ts: 30 + chunk })));
      }
      const last = await store.appendEvents({ ownerId, emitterId: source.id, emits: [], dedupe: null, retention: 10, now: 50, logs: [{ stream: "stderr", text: "last", ts: 50 }] });
      expect(last.logs[0]!.id).toBe("50-0");
      const page = await store.listLogs(ownerId, source.id, parsePageRequest({ limit: 1 }));
      expect(page.totalCount).toBe(1000);
      expect(page.items[0]!.text).toBe("last");
      // The oldest kept: 1202 lines were written, of which the 203 oldest went.
      const oldest = await store.listLogs(ownerId, source.id, parsePageRequest({ limit: 1, before: "0-0" }));
      expect(oldest.items.map((l) => l.text)).toEqual(["line 201"]);
    });

    it("appends and pages logs, owner-scoped", async () => {
      const logs = await store.appendLogs(ownerId, source.id, [
        { stream: "stdout", text: "one", ts: 10 },
        { stream: "stderr", text: "two", ts: 10 },
      ]);
      expect(logs.map((l) => l.id)).toEqual(["10-0", "10-1"]);
      const page = await store.listLogs(ownerId, source.id, parsePageRequest({}));
      expect(page.items.map((l) => l.text)).toEqual(["two", "one"]);
      expect((await store.listLogs(otherId, source.id, parsePageRequest({}))).totalCount).toBe(0);
    });

    it("lets exactly one claimer take a timer tick", async () => {
      const timed = await store.createSource(sourceFor(ownerId, source.componentId, "timed", { timer: { intervalSeconds: 60, cron: null }, nextTickAt: 1_000 }), {});
      expect(await store.nextTimerDueAt()).toBe(1_000);
      expect(await store.dueTimers(999, 10)).toEqual([]);
      expect(await store.dueTimers(1_000, 10)).toEqual([{ id: timed.id, ownerId, nextTickAt: 1_000 }]);
      const claims = await Promise.all([store.claimTick(timed.id, 1_000, 61_000), store.claimTick(timed.id, 1_000, 61_000)]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await store.nextTimerDueAt()).toBe(61_000);
      await store.updateSource({ ...timed, nextTickAt: 61_000, active: false });
      expect(await store.nextTimerDueAt()).toBeNull();
    });

    it("records a shared queue's tick with its events: the same tick again appends none of its emits, the batch's others are kept", async () => {
      const tickAt = 1_700_000_000_000;
      const first = { event: { tick: 1 } };
      const appended = await store.appendEvents({ ownerId, emitterId: source.id, emits: [first], dedupe: null, retention: 100, now: tickAt, ticks: [{ dueAtMs: tickAt, emits: [first] }] });
      expect(appended.events.map((event) => event.event)).toEqual([{ tick: 1 }]);
      expect(appended.repeatedTicks).toBeUndefined();
      expect(await store.timerTickRecorded(source.id, tickAt)).toBe(true);
      expect(await store.timerTickRecorded(source.id, tickAt + 1_000)).toBe(false);

      // Run again (its worker died after recording it), batched with an HTTP call's emit and the next tick.
      const again = { event: { tick: "again" } };
      const request = { event: { request: true } };
      const next = { event: { tick: 2 } };
      const batch = await store.appendEvents({
        ownerId,
        emitterId: source.id,
        emits: [again, request, next],
        dedupe: null,
        retention: 100,
        now: tickAt + 1_500,
        sourceDb: { count: 9 },
        ticks: [
          { dueAtMs: tickAt, emits: [again] },
          { dueAtMs: tickAt + 1_000, emits: [next] },
        ],
      });
      expect(batch.repeatedTicks).toEqual([tickAt]);
      expect(batch.accepted).toEqual([request, next]);
      expect(batch.events.map((event) => event.event)).toEqual([{ request: true }, { tick: 2 }]);
      expect(await store.readSourceDb(ownerId, source.id)).toEqual({ count: 9 });
      const all = await store.listEvents(ownerId, source.id, { page: parsePageRequest({ limit: 10 }) });
      expect(all.items.map((event) => event.event)).toEqual([{ tick: 2 }, { request: true }, { tick: 1 }]);

      // An hour on, the oldest are pruned as ticks are recorded; a deleted source leaves none.
      await store.appendEvents({ ownerId, emitterId: source.id, emits: [], dedupe: null, retention: 100, now: tickAt + 3_700_000, ticks: [{ dueAtMs: tickAt + 3_700_000, emits: [] }] });
      expect(await store.timerTickRecorded(source.id, tickAt)).toBe(false);
      expect(await store.timerTickRecorded(source.id, tickAt + 3_700_000)).toBe(true);
      await store.deleteSource(ownerId, source.id);
      expect(await store.timerTickRecorded(source.id, tickAt + 3_700_000)).toBe(false);
    });

    it("records a delivery per matching subscription with the events, once, for its owner only", async () => {
      const at = Date.now();
      const sub = (emitterId: string, eventName: string, listenerId: string, owner = ownerId) => ({
        id: newId("subscription"),
        ownerId: owner,
        emitterId,
        listenerId,
        eventName,
        createdAt: at,
      });
      const exact = await store.subscribe(sub(source.id, "", "p_exact"));
      expect(await store.subscribe(sub(source.id, "", "p_exact"))).toEqual(exact); // idempotent
      await store.subscribe(sub("dc_*", "alerts", "p_glob"));
      await store.subscribe(sub("p_*", "", "p_workflows"));
      await store.subscribe(sub(source.id, "", "p_other_owner", otherId));
      expect((await store.listSubscriptions(ownerId)).map((s) => s.listenerId).sort()).toEqual(["p_exact", "p_glob", "p_workflows"]);

      const appended = await store.appendEvents({
        ownerId,
        emitterId: source.id,
        emits: [{ event: 1 }, { event: 2, name: "alerts" }, { event: 3 }],
        dedupe: null,
        retention: 100,
        now: 9_000,
      });
      const [first, alert, third] = appended.events;
      expect((await store.pendingDeliveries("p_exact", 10)).map((d) => d.eventId)).toEqual([first!.id, third!.id]);
      expect(await store.pendingDeliveries("p_glob", 10)).toMatchObject([{ eventId: alert!.id, channel: "alerts", emitterId: source.id, status: "pending", attempts: 0 }]);
      expect(await store.pendingDeliveries("p_workflows", 10)).toEqual([]);
      expect(await store.pendingDeliveries("p_other_owner", 10)).toEqual([]);

      expect(await store.unsubscribe(otherId, { emitterId: source.id, listenerId: "p_exact", eventName: "" })).toBe(false);
      expect(await store.unsubscribe(ownerId, { emitterId: source.id, listenerId: "p_exact", eventName: "" })).toBe(true);
      await store.appendEvents({ ownerId, emitterId: source.id, emits: [{ event: 4 }], dedupe: null, retention: 100, now: 9_001 });
      expect(await store.pendingDeliveries("p_exact", 10)).toHaveLength(2);
    });
  });
}
