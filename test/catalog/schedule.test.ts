import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOG_ROOT } from "../../src/catalog/bundle-catalog.js";
import { catalogCode } from "../helpers/catalog.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, eventually } from "../helpers/sources.js";

/**
 * The schedule sources on real timers: short intervals, a per-second cron, and
 * the current minute as the time of day (with the timer checking every second),
 * so nothing waits for a day. The tests that wait on timers run side by side.
 */

let server: TestServer;
const code: Record<string, string> = {};
beforeAll(async () => {
  server = await startTestServer();
  for (const slug of ["custom-interval", "cron-scheduler", "daily", "weekly"]) code[slug] = await catalogCode(`schedule/sources/${slug}/${slug}.mjs`);
});
afterAll(() => server.close());

const deploy = (slug: string, configured_props: Record<string, unknown>, name = slug) =>
  deploySource(server, server.adminKey, { component_code: code[slug], name, configured_props });
const remove = (id: string) => call(server.url, "DELETE", `/v1/sources/${id}`, { key: server.adminKey });
const deployRefused = (slug: string, configured_props: Record<string, unknown>) =>
  call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: code[slug], name: `${slug} refused`, configured_props } });

async function eventsAtLeast(id: string, count: number, timeoutMs = 8_000): Promise<any[]> {
  return eventually(async () => {
    const events = await eventsOf(server, server.adminKey, id);
    return events.length >= count ? events.reverse() : undefined;
  }, timeoutMs, `${count} events`);
}

/** The wall-clock minute ("HH:MM") and weekday of a moment in a zone. */
function wallClock(epochMs: number, timeZone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", hour: "2-digit", minute: "2-digit", weekday: "long" })
      .formatToParts(new Date(epochMs))
      .map((part) => [part.type, part.value]),
  );
  return { time: `${parts.hour}:${parts.minute}`, weekday: String(parts.weekday).toLowerCase() };
}

describe.concurrent("schedule-custom-interval", () => {
  it("emits a tick with its timestamp, ISO time and interval on a real timer", async () => {
    const source = await deploy("custom-interval", { timer: { intervalSeconds: 1 } });
    expect(source.configured_props.timer).toEqual({ cron: null, interval_seconds: 1 });
    const events = await eventsAtLeast(source.id, 2);
    await remove(source.id);
    const [first, second] = events.map((e) => e.event);
    expect(first).toEqual({ timestamp: expect.any(Number), iso: new Date(first.timestamp * 1000).toISOString(), interval_seconds: 1 });
    expect(second.timestamp - first.timestamp).toBeGreaterThanOrEqual(1); // a tick run late may skip one
    expect(events[0].metadata.summary).toBe(`Tick at ${first.iso}`);
  });

  it("uses a 15-minute interval when the deploy gives none", async () => {
    const source = await deploy("custom-interval", {}, "default interval");
    expect(source.configured_props.timer).toEqual({ cron: null, interval_seconds: 900 });
    await remove(source.id);
  });
});

describe.concurrent("schedule-cron-scheduler", () => {
  it("emits at the seconds a 6-field cron names, with the scheduled time in the chosen zone", async () => {
    const source = await deploy("cron-scheduler", { cron: "*/2 * * * * *", timeZone: "Asia/Kolkata", timer: { cron: "* * * * * *" } });
    const events = await eventsAtLeast(source.id, 2);
    await remove(source.id);
    const [first, second] = events.map((e) => e.event);
    expect(first).toMatchObject({ cron: "*/2 * * * * *", time_zone: "Asia/Kolkata", timestamp: expect.any(Number) });
    expect(first.iso).toBe(new Date(first.timestamp * 1000).toISOString());
    expect(first.scheduled_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d[02468]\+05:30$/);
    expect(Date.parse(first.scheduled_time)).toBe(first.timestamp * 1000);
    expect((second.timestamp - first.timestamp) % 2).toBe(0); // every other second (a tick run late may skip one)
    expect(second.timestamp).toBeGreaterThan(first.timestamp);
  });

  it("emits a 5-field schedule once per minute even when the timer checks every second", async () => {
    const source = await deploy("cron-scheduler", { cron: "* * * * *", timeZone: "America/New_York", timer: { cron: "* * * * * *" } }, "every minute");
    const [event] = await eventsAtLeast(source.id, 1, 65_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // more ticks in the same minute
    const events = await eventsOf(server, server.adminKey, source.id);
    await remove(source.id);
    expect(event.event.scheduled_time).toMatch(/T\d\d:\d\d:00-0[45]:00$/);
    // Ticks every second, one event per minute (two only if a minute boundary fell inside the wait).
    expect(events.length).toBeLessThanOrEqual(2);
    expect(new Set(events.map((e) => e.event.scheduled_time)).size).toBe(events.length);
  }, 70_000);

  it("refuses a bad cron expression or time zone at deploy, naming the prop", async () => {
    const badCron = await deployRefused("cron-scheduler", { cron: "61 * * * *" });
    expect(badCron.status).toBe(400);
    expect(badCron.body.error.message).toContain('Prop "cron": field 1 (minute) has 61; the minute takes 0-59.');
    const fourFields = await deployRefused("cron-scheduler", { cron: "0 9 * *" });
    expect(fourFields.body.error.message).toContain("has 4");
    const badZone = await deployRefused("cron-scheduler", { cron: "0 9 * * *", timeZone: "Mars/Olympus" });
    expect(badZone.status).toBe(400);
    expect(badZone.body.error.message).toContain('Prop "timeZone": "Mars/Olympus" is not a time zone');
    const missing = await deployRefused("cron-scheduler", {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe("configured_props.cron");
  });
});

describe.concurrent("schedule-daily and schedule-weekly", () => {
  it("emit at the time of day in the zone, once, and not on another weekday", async () => {
    const timeZone = "Europe/Lisbon";
    // The current minute as the time of day: the first tick in it matches, however late it runs
    // (a tick a second late may skip a second, never the minute). Keep clear of the minute's end.
    const second = new Date().getSeconds();
    if (second >= 55) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
    const at = wallClock(Date.now(), timeZone);
    const otherDay = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"].find((day) => day !== at.weekday)!;
    const perSecond = { cron: "* * * * * *" };
    const daily = await deploy("daily", { timeOfDay: at.time, timeZone, timer: perSecond });
    const weekly = await deploy("weekly", { daysOfWeek: [at.weekday], timeOfDay: at.time, timeZone, timer: perSecond });
    const notToday = await deploy("weekly", { daysOfWeek: [otherDay], timeOfDay: at.time, timeZone, timer: perSecond }, "weekly other day");
    const [dailyEvent] = await eventsAtLeast(daily.id, 1);
    const [weeklyEvent] = await eventsAtLeast(weekly.id, 1);
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // more ticks in the same minute emit nothing more
    const counts = await Promise.all([daily, weekly, notToday].map(async (source) => (await eventsOf(server, server.adminKey, source.id)).length));
    await Promise.all([daily, weekly, notToday].map((source) => remove(source.id)));
    expect(counts).toEqual([1, 1, 0]);
    expect(dailyEvent.event).toMatchObject({ time_of_day: at.time, time_zone: timeZone });
    expect(dailyEvent.event.scheduled_time).toMatch(new RegExp(`T${at.time}:00\\+0[01]:00$`));
    expect(weeklyEvent.event).toMatchObject({ days_of_week: [at.weekday], time_of_day: at.time, scheduled_time: dailyEvent.event.scheduled_time });
    expect(dailyEvent.metadata.summary).toBe(`Scheduled at ${dailyEvent.event.scheduled_time}`);
  });

  it("emit a sample tick when run by hand, and show their schedule through the API", async () => {
    const weekly = await deploy("weekly", { daysOfWeek: ["friday", "monday"], timeOfDay: "17:30", timeZone: "America/Sao_Paulo" }, "weekly by hand");
    expect(weekly.configured_props).toMatchObject({ daysOfWeek: ["friday", "monday"], timeOfDay: "17:30", timeZone: "America/Sao_Paulo", timer: { cron: "* * * * *", interval_seconds: null } });
    // A run by hand on a whole minute would look like the timer's tick: keep clear of one.
    const second = new Date().getSeconds();
    if (second === 0 || second === 59) await new Promise((resolve) => setTimeout(resolve, 2_000));
    const run = await call(server.url, "POST", `/v1/sources/${weekly.id}/run`, { key: server.adminKey, json: {} });
    expect(run.status).toBeLessThan(300);
    const [event] = await eventsAtLeast(weekly.id, 1);
    await remove(weekly.id);
    expect(event.event).toMatchObject({ manual: true, days_of_week: ["friday", "monday"], time_of_day: "17:30", time_zone: "America/Sao_Paulo" });
    expect(event.event.scheduled_time).toMatch(/-03:00$/);
  });

  it("refuse a bad time of day, day or zone at deploy, naming the prop", async () => {
    const badTime = await deployRefused("daily", { timeOfDay: "25:00" });
    expect(badTime.status).toBe(400);
    expect(badTime.body.error.message).toContain('Prop "timeOfDay": "25:00" is not a time of day. Write it as HH:MM');
    const badDay = await deployRefused("weekly", { daysOfWeek: ["funday"] });
    expect(badDay.status).toBe(400);
    expect(badDay.body.error.details.field).toMatch(/^configured_props\.daysOfWeek/);
    const badZone = await deployRefused("weekly", { timeZone: "Europe/Atlantis" });
    expect(badZone.status).toBe(400);
    expect(badZone.body.error.message).toContain('"Europe/Atlantis" is not a time zone');
  });

  it("refuse a timer that checks too seldom for the schedule", async () => {
    const hourly = await deployRefused("daily", { timeOfDay: "09:00", timer: { intervalSeconds: 3600 } });
    expect(hourly.status).toBe(400);
    expect(hourly.body.error.message).toContain('The prop "timer" checks the schedule every 3600 s, so scheduled times would be missed.');
    const seconds = await deployRefused("daily", { timeOfDay: "09:00:30" });
    expect(seconds.body.error.message).toContain('names seconds, so the prop "timer" must check every second: set it to { "cron": "* * * * * *" }.');
    const cronSeconds = await deployRefused("cron-scheduler", { cron: "*/5 * * * * *", timer: { intervalSeconds: 60 } });
    expect(cronSeconds.body.error.message).toContain('The schedule "*/5 * * * * *" names seconds');
  });
});

/** The schedule code itself, for what a real timer cannot show in seconds: names, ranges, daylight saving changes. */
describe("schedule matching", () => {
  const load = async (path: string) => import(join(CATALOG_ROOT, path));

  it("reads names, ranges, steps and lists, and either day field when both are set", async () => {
    const { parseCron, cronMatches } = await load("common/cron.mjs");
    const at = (weekday: number, day: number, hour: number, minute: number, month = 11) => ({ year: 2026, month, day, hour, minute, second: 0, weekday });
    const weekdays = parseCron("0 9 * * MON-FRI");
    expect(cronMatches(weekdays, at(5, 27, 9, 0))).toBe(true);
    expect(cronMatches(weekdays, at(6, 28, 9, 0))).toBe(false);
    const quarter = parseCron("*/15 8-10 * jan,nov *");
    expect([0, 15, 30, 45, 50].map((minute) => cronMatches(quarter, at(5, 27, 9, minute)))).toEqual([true, true, true, true, false]);
    expect(cronMatches(quarter, at(5, 27, 9, 0, 12))).toBe(false);
    const firstOrSunday = parseCron("0 0 1 * 7"); // day 1 of the month OR a Sunday
    expect([at(0, 29, 0, 0), at(2, 1, 0, 0), at(3, 2, 0, 0)].map((time) => cronMatches(firstOrSunday, time))).toEqual([true, true, false]);
    expect(() => parseCron("5-1 * * * *")).toThrow('Prop "cron": field 1 (minute) has the range 5-1, which runs backwards.');
    expect(() => parseCron("*/0 * * * *")).toThrow("a step is a whole number of at least 1");
    expect(() => parseCron("0 9 * * MOON")).toThrow('field 5 (day of week) has "MOON", which is not a number or a name such as SUN.');
  });

  it("follows daylight saving changes: a skipped time does not run, a repeated one runs twice", async () => {
    const { parseCron } = await load("common/cron.mjs");
    const { emitIfScheduled } = await load("schedule/common/zoned-schedule.mjs");
    const emitted: any[] = [];
    const source = { $emit: (event: unknown, meta: unknown) => emitted.push({ event, meta }) };
    const tick = (iso: string) => ({ timestamp: Date.parse(iso) / 1000, cron: "* * * * *" });
    const halfPastOne = parseCron("30 1 * * *");
    const halfPastTwo = parseCron("30 2 * * *");
    // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT, so 02:30 never happens; every minute of the night is checked.
    for (let minute = 0; minute < 4 * 60; minute++) emitIfScheduled(source, tick(new Date(Date.UTC(2026, 2, 8, 5) + minute * 60_000).toISOString()), halfPastTwo, "America/New_York", {});
    expect(emitted).toEqual([]);
    // 2026-11-01: 01:00-02:00 happens twice (EDT, then EST).
    for (let minute = 0; minute < 4 * 60; minute++) emitIfScheduled(source, tick(new Date(Date.UTC(2026, 10, 1, 4) + minute * 60_000).toISOString()), halfPastOne, "America/New_York", {});
    expect(emitted.map((e) => e.event.scheduled_time)).toEqual(["2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00"]);
    expect(new Set(emitted.map((e) => e.meta.id)).size).toBe(2);
  });
});
