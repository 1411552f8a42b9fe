import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, eventually } from "../helpers/sources.js";

const TICKER = `module.exports = {
  name: "Ticker", version: "1",
  props: { timer: { type: "$.interface.timer", default: { intervalSeconds: 1 } }, db: "$.service.db" },
  async run(event) { const n = (this.db.get("n") ?? 0) + 1; this.db.set("n", n); this.$emit({ ...event, n }); },
};`;

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
