import { rm } from "node:fs/promises";
import { join } from "node:path";
import { SqliteDatabaseClass as Database } from "../../src/store/sqlite/sqlite-binding.js";
import { Cron } from "croner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, eventually } from "../helpers/sources.js";

const TICKER = `module.exports = {
  name: "Ticker", version: "1",
  props: { timer: { type: "$.interface.timer", default: { intervalSeconds: 1 } }, db: "$.service.db" },
  async run(event) { const n = (this.db.get("n") ?? 0) + 1; this.db.set("n", n); this.$emit({ ...event, n }); },
};`;

/** The wall-clock hour and minute of an instant in a zone, "HH:MM". */
function wallClock(epochMs: number, timeZone: string): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone, hourCycle: "h23", hour: "2-digit", minute: "2-digit" }).format(new Date(epochMs));
}

describe("timer interface", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("runs an interval timer with the timer event, and stops when the source is turned off", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: TICKER });
    expect(source.configured_props.timer).toEqual({ cron: null, interval_seconds: 1 });
    const events = await eventually(async () => {
      const list = await eventsOf(server, server.adminKey, source.id);
      return list.length >= 2 ? list : undefined;
    }, 6_000, "two ticks");
    expect(events[0].event).toMatchObject({ interval_seconds: 1, timestamp: expect.any(Number) });
    expect(events.map((e) => e.event.n)).toEqual(events.map((_, i) => events.length - i));
    await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { active: false } });
    const count = (await eventsOf(server, server.adminKey, source.id)).length;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await eventsOf(server, server.adminKey, source.id)).length).toBe(count);
  });

  it("runs a cron timer (seconds field) configured at deploy, and takes a new schedule on update", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: TICKER, name: "cron ticker", configured_props: { timer: { cron: "* * * * * *" } } });
    expect(source.configured_props.timer).toEqual({ cron: "* * * * * *", interval_seconds: null });
    const [event] = await eventually(async () => {
      const list = await eventsOf(server, server.adminKey, source.id);
      return list.length >= 1 ? list : undefined;
    }, 5_000, "a cron tick");
    expect(event.event).toMatchObject({ cron: "* * * * * *", timestamp: expect.any(Number) });
    const updated = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { configured_props: { timer: { intervalSeconds: 3600 } } } });
    expect(updated.body.data.configured_props.timer).toEqual({ cron: null, interval_seconds: 3600 });
    await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey });
  });

  it("refuses a bad cron expression, naming the prop", async () => {
    const response = await call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: TICKER, configured_props: { timer: { cron: "99 * * * *" } } } });
    expect(response.status).toBe(400);
    expect(response.body.error.details.field).toBe("configured_props.timer");
  });

  describe("in a time zone", () => {
    /** The next tick the server stored for a source: what its scheduler will fire at. */
    function storedNextTick(sourceId: string): number {
      const database = new Database(join(server.dataDir, "runnel.sqlite"), { readonly: true });
      try {
        return (database.prepare("SELECT next_tick_at FROM sources WHERE id = ?").get(sourceId) as { next_tick_at: number }).next_tick_at;
      } finally {
        database.close();
      }
    }

    it("takes { cron, timezone }, echoes the zone, and schedules the next tick in that zone", async () => {
      const before = Date.now();
      const source = await deploySource(server, server.adminKey, { component_code: TICKER, name: "paris mornings", configured_props: { timer: { cron: "30 9 * * *", timezone: "Europe/Paris" } } });
      expect(source.configured_props.timer).toEqual({ cron: "30 9 * * *", interval_seconds: null, timezone: "Europe/Paris" });
      // The tick the server stored is croner's next 09:30 in Paris (not 09:30 UTC): 07:30 or 08:30 UTC by the season.
      const next = storedNextTick(source.id);
      expect(next).toBe(new Cron("30 9 * * *", { timezone: "Europe/Paris" }).nextRun(new Date(before))!.getTime());
      expect(wallClock(next, "Europe/Paris")).toBe("09:30");
      expect(wallClock(next, "UTC")).not.toBe("09:30");

      // What the API showed can be sent back as it is; a new zone moves the tick.
      const same = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { configured_props: { timer: source.configured_props.timer } } });
      expect(same.body.data.configured_props.timer).toEqual(source.configured_props.timer);
      const moved = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { configured_props: { timer: { cron: "30 9 * * *", timezone: "America/New_York" } } } });
      expect(moved.body.data.configured_props.timer).toEqual({ cron: "30 9 * * *", interval_seconds: null, timezone: "America/New_York" });
      expect(wallClock(storedNextTick(source.id), "America/New_York")).toBe("09:30");
      // Without a zone, UTC, and no timezone field.
      const utc = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { configured_props: { timer: { cron: "30 9 * * *" } } } });
      expect(utc.body.data.configured_props.timer).toEqual({ cron: "30 9 * * *", interval_seconds: null });
      expect(wallClock(storedNextTick(source.id), "UTC")).toBe("09:30");
      await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey });
    });

    it("takes a zone in a component's default, and shows it in a workflow's triggers", async () => {
      const zoned = TICKER.replace("default: { intervalSeconds: 1 }", 'default: { cron: "0 7 * * 1-5", timezone: "Asia/Tokyo" }');
      const source = await deploySource(server, server.adminKey, { component_code: zoned, name: "tokyo weekdays" });
      expect(source.configured_props.timer).toEqual({ cron: "0 7 * * 1-5", interval_seconds: null, timezone: "Asia/Tokyo" });
      expect(wallClock(storedNextTick(source.id), "Asia/Tokyo")).toBe("07:00");
      await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey });

      const workflow = await call(server.url, "POST", "/v1/workflows", { key: server.adminKey, json: { name: "tokyo flow", trigger: { component_code: zoned, configured_props: {} }, steps: [] } });
      expect(workflow.status).toBe(200);
      expect(workflow.body.data.triggers).toEqual([{ id: workflow.body.data.trigger.source_id, type: "component", interval_seconds: null, cron: "0 7 * * 1-5", timezone: "Asia/Tokyo" }]);
      await call(server.url, "DELETE", `/v1/workflows/${workflow.body.data.id}`, { key: server.adminKey });

      // A workflow's own timer trigger takes the zone too, in Runnel's form and the hosted one.
      const inline = await call(server.url, "POST", "/v1/workflows", { key: server.adminKey, json: { name: "paris flow", trigger: { type: "timer", cron: "0 7 * * *", timezone: "Europe/Paris" }, steps: [] } });
      expect(inline.body.data.triggers).toEqual([{ id: inline.body.data.trigger.source_id, type: "timer", interval_seconds: null, cron: "0 7 * * *", timezone: "Europe/Paris" }]);
      expect(wallClock(storedNextTick(inline.body.data.trigger.source_id), "Europe/Paris")).toBe("07:00");
      await call(server.url, "DELETE", `/v1/workflows/${inline.body.data.id}`, { key: server.adminKey });
      const badZone = await call(server.url, "POST", "/v1/workflows", { key: server.adminKey, json: { name: "nowhere flow", trigger: { type: "timer", cron: "0 7 * * *", timezone: "Nowhere/City" }, steps: [] } });
      expect(badZone.status).toBe(400);
      expect(badZone.body.error.details.field).toBe("trigger.timezone");
      expect(badZone.body.error.message).toContain('trigger.timezone "Nowhere/City" is not a time zone this server knows');
      const hosted = await call(server.url, "POST", "/v1/workflows", { key: server.adminKey, json: { settings: { name: "hosted zoned" }, triggers: [{ type: "timer", intervalSeconds: 60, timezone: "Europe/Paris" }], steps: [] } });
      expect(hosted.status).toBe(400);
      expect(hosted.body.error.details.field).toBe("triggers[0].timezone");
    });

    it("fires a per-second cron in its zone for real, with the zone in the event", async () => {
      // Only this hour of Kathmandu's clock (UTC+05:45): read in UTC the same cron would not fire now.
      const zone = "Asia/Kathmandu";
      if (new Date().getUTCMinutes() === 14 && new Date().getUTCSeconds() >= 50) await new Promise((resolve) => setTimeout(resolve, 11_000)); // Kathmandu's hour turns at :15 UTC
      const hour = Number(wallClock(Date.now(), zone).slice(0, 2));
      expect(wallClock(Date.now(), "UTC").slice(0, 2)).not.toBe(wallClock(Date.now(), zone).slice(0, 2));
      const cron = `* * ${hour} * * *`;
      const source = await deploySource(server, server.adminKey, { component_code: TICKER, name: "kathmandu seconds", configured_props: { timer: { cron, timezone: zone } } });
      const [event] = await eventually(async () => {
        const list = await eventsOf(server, server.adminKey, source.id);
        return list.length >= 1 ? list : undefined;
      }, 5_000, "a tick in Kathmandu's hour");
      await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey });
      expect(event.event).toMatchObject({ cron, timezone: zone, timestamp: expect.any(Number) });
      expect(Number(wallClock(event.event.timestamp * 1000, zone).slice(0, 2))).toBe(hour);
    });

    it("refuses an unknown zone, an offset, or a zone on an interval, naming the prop and the zone", async () => {
      const refused = async (timer: unknown) => {
        const response = await call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: TICKER, name: "refused", configured_props: { timer } } });
        expect(response.status).toBe(400);
        expect(response.body.error.details.field).toBe("configured_props.timer");
        return response.body.error.message as string;
      };
      expect(await refused({ cron: "0 9 * * *", timezone: "Mars/Olympus" })).toContain('Timer "timer" timezone "Mars/Olympus" is not a time zone this server knows; use an IANA time zone name such as "Europe/Paris"');
      expect(await refused({ cron: "0 9 * * *", timezone: "+01:00" })).toContain('timezone "+01:00" is an offset, not a time zone');
      expect(await refused({ cron: "0 9 * * *", timezone: 2 })).toContain("timezone must be an IANA time zone name");
      expect(await refused({ intervalSeconds: 60, timezone: "Europe/Paris" })).toContain("a time zone applies to a cron schedule only");
      // A component's default is checked the same way, when the code is saved.
      const badDefault = await call(server.url, "POST", "/v1/sources", {
        key: server.adminKey,
        json: { component_code: TICKER.replace("default: { intervalSeconds: 1 }", 'default: { cron: "0 9 * * *", timezone: "Europe/Atlantis" }'), name: "bad default" },
      });
      expect(badDefault.status).toBe(400);
      expect(badDefault.body.error.message).toContain('Prop "timer": the default timer timezone "Europe/Atlantis" is not a time zone');
    });
  });
});

describe("timers across a restart", () => {
  it("go on after a restart with no tick lost to the stop or run twice", async () => {
    const first = await startTestServer({}, { keepData: true });
    const source = await deploySource(first, first.adminKey, { component_code: TICKER });
    await eventually(async () => ((await eventsOf(first, first.adminKey, source.id)).length >= 2 ? true : undefined), 6_000, "ticks before the restart");
    await first.close();
    // Down for longer than the interval: the missed tick runs once on start, not once per missed second.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const second = await startTestServer({}, { dataDir: first.dataDir });
    try {
      const before = await eventsOf(second, second.adminKey, source.id);
      const after = await eventually(async () => {
        const list = await eventsOf(second, second.adminKey, source.id);
        return list.length >= before.length + 2 ? list : undefined;
      }, 6_000, "ticks after the restart");
      const counts = after.map((e) => e.event.n).reverse();
      expect(counts).toEqual(counts.map((_, i) => i + 1)); // the store's counter saw every run once
      const timestamps = after.map((e) => e.event.timestamp);
      expect(new Set(timestamps).size).toBe(timestamps.length); // no tick ran twice
    } finally {
      await second.close();
      await rm(first.dataDir, { recursive: true, force: true });
    }
  });
});
