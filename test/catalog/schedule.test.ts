import { join } from "node:path";
import { SqliteDatabaseClass as Database } from "../../src/store/sqlite/sqlite-binding.js";
import { Cron } from "croner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOG_ROOT } from "../../src/catalog/bundle-catalog.js";
import { firstTick, nextTickAfter } from "../../src/engine/sources/timer-schedule.js";
import { catalogCode } from "../helpers/catalog.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, eventually } from "../helpers/sources.js";

/**
 * The schedule sources on real timers: short intervals, a per-second cron, and
 * a time of day a few seconds ahead (with seconds), so nothing waits for a day.
 * The platform's timer fires the cron, daily and weekly sources in their zone:
 * where a test cannot wait, it reads the next tick the server stored and checks
 * it against croner's. The tests that wait on timers run side by side.
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

/** The wall-clock time ("HH:MM:SS", and its fields) and weekday of a moment in a zone. */
function wallClock(epochMs: number, timeZone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", hour: "2-digit", minute: "2-digit", second: "2-digit", weekday: "long" })
      .formatToParts(new Date(epochMs))
      .map((part) => [part.type, part.value]),
  );
  const [hour, minute, second] = [Number(parts.hour), Number(parts.minute), Number(parts.second)];
  return { time: `${parts.hour}:${parts.minute}:${parts.second}`, hour, minute, second, weekday: String(parts.weekday).toLowerCase() };
}

/** The next tick the server stored for a source: when its timer fires next. */
function storedNextTick(sourceId: string): number {
  const database = new Database(join(server.dataDir, "runnel.sqlite"), { readonly: true });
  try {
    return (database.prepare("SELECT next_tick_at FROM sources WHERE id = ?").get(sourceId) as { next_tick_at: number }).next_tick_at;
  } finally {
    database.close();
  }
}

const nextRun = (cron: string, timezone: string, from: number) => new Cron(cron, { timezone }).nextRun(new Date(from))!.getTime();

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
  it("emits at the seconds its zoned timer names, for real, with the scheduled time in the zone", async () => {
    const timer = { cron: "*/2 * * * * *", timezone: "Asia/Kolkata" };
    const bare = await deploy("cron-scheduler", { timer }, "timer only");
    // The friendlier props may name the same schedule in other words.
    const worded = await deploy("cron-scheduler", { cron: "0-58/2 * * * * *", timeZone: "Asia/Kolkata", timer }, "props and timer");
    expect(bare.configured_props.timer).toEqual({ cron: "*/2 * * * * *", interval_seconds: null, timezone: "Asia/Kolkata" });
    const [events, wordedEvents] = await Promise.all([eventsAtLeast(bare.id, 2), eventsAtLeast(worded.id, 1)]);
    await Promise.all([remove(bare.id), remove(worded.id)]);
    const [first, second] = events.map((e) => e.event);
    expect(first).toEqual({ cron: "*/2 * * * * *", time_zone: "Asia/Kolkata", timestamp: expect.any(Number), iso: new Date(first.timestamp * 1000).toISOString(), scheduled_time: expect.any(String) });
    expect(first.scheduled_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d[02468]\+05:30$/);
    expect(Date.parse(first.scheduled_time)).toBe(first.timestamp * 1000);
    expect((second.timestamp - first.timestamp) % 2).toBe(0); // every other second (a tick run late may skip one)
    expect(second.timestamp).toBeGreaterThan(first.timestamp);
    expect(events[0].metadata.summary).toBe(`Scheduled at ${first.scheduled_time}`);
    expect(wordedEvents[0].event).toMatchObject({ cron: "0-58/2 * * * * *", time_zone: "Asia/Kolkata" });
  });

  it("is fired by the platform at the cron's next time in the zone, not polled every minute", async () => {
    const before = Date.now();
    const source = await deploy("cron-scheduler", { cron: "0 9 * * 1-5", timeZone: "America/New_York", timer: { cron: "0 9 * * 1-5", timezone: "America/New_York" } }, "weekday mornings");
    const next = storedNextTick(source.id);
    await remove(source.id);
    expect(next).toBe(nextRun("0 9 * * 1-5", "America/New_York", before));
    expect(wallClock(next, "America/New_York")).toMatchObject({ time: "09:00:00" });
    // Left out, the schedule is the timer's default: midnight UTC.
    const byDefault = await deploy("cron-scheduler", {}, "default schedule");
    await remove(byDefault.id);
    expect(byDefault.configured_props.timer).toEqual({ cron: "0 0 * * *", interval_seconds: null, timezone: "UTC" });
  });

  it("refuses a bad cron expression or time zone at deploy, naming the prop, and a timer that is not the props' schedule", async () => {
    const badCron = await deployRefused("cron-scheduler", { cron: "61 * * * *" });
    expect(badCron.status).toBe(400);
    expect(badCron.body.error.message).toContain('Prop "cron": field 1 (minute) has 61; the minute takes 0-59.');
    const fourFields = await deployRefused("cron-scheduler", { cron: "0 9 * *" });
    expect(fourFields.body.error.message).toContain("has 4");
    const badZone = await deployRefused("cron-scheduler", { cron: "0 9 * * *", timeZone: "Mars/Olympus" });
    expect(badZone.status).toBe(400);
    expect(badZone.body.error.message).toContain('Prop "timeZone": "Mars/Olympus" is not a time zone');
    const badTimerZone = await deployRefused("cron-scheduler", { timer: { cron: "0 9 * * *", timezone: "Mars/Olympus" } });
    expect(badTimerZone.status).toBe(400);
    expect(badTimerZone.body.error.details.field).toBe("configured_props.timer");
    expect(badTimerZone.body.error.message).toContain('timezone "Mars/Olympus" is not a time zone');
    const mismatch = await deployRefused("cron-scheduler", { cron: "0 9 * * 1-5", timeZone: "Europe/Paris" });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.message).toContain('The prop "timer" is the schedule Runnel fires, and it must match the schedule "0 9 * * 1-5" in Europe/Paris (props "cron" and "timeZone"): set it to { "cron": "0 9 * * 1-5", "timezone": "Europe/Paris" } (it is { "cron": "0 0 * * *", "timezone": "UTC" }).');
    const interval = await deployRefused("cron-scheduler", { timer: { intervalSeconds: 60 } });
    expect(interval.body.error.message).toContain('The prop "timer" must be a cron schedule with its time zone');
  });
});

describe.concurrent("schedule-daily and schedule-weekly", () => {
  it("emit at the time of day in the zone, once, and not on another weekday", async () => {
    const timeZone = "Europe/Lisbon";
    // A time of day a few seconds ahead, with seconds, so the timer fires it while the test waits.
    const target = Math.ceil(Date.now() / 1000) * 1000 + 7_000;
    const at = wallClock(target, timeZone);
    const otherDay = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"].find((day) => day !== at.weekday)!;
    const daily = `${at.second} ${at.minute} ${at.hour} * * *`;
    const weekdayCron = (day: string) => `${at.second} ${at.minute} ${at.hour} * * ${day.slice(0, 3).toUpperCase()}`;
    const [withProps, timerOnly, weekly, notToday] = await Promise.all([
      deploy("daily", { timeOfDay: at.time, timeZone, timer: { cron: daily, timezone: timeZone } }),
      deploy("daily", { timer: { cron: daily, timezone: timeZone } }, "daily timer only"),
      deploy("weekly", { daysOfWeek: [at.weekday], timeOfDay: at.time, timeZone, timer: { cron: weekdayCron(at.weekday), timezone: timeZone } }),
      deploy("weekly", { daysOfWeek: [otherDay], timeOfDay: at.time, timeZone, timer: { cron: weekdayCron(otherDay), timezone: timeZone } }, "weekly other day"),
    ]);
    expect(Date.now()).toBeLessThan(target); // deployed in time for the tick
    // The other day's source is not due until its day: its next tick is a day or more away.
    expect(storedNextTick(notToday.id)).toBe(nextRun(weekdayCron(otherDay), timeZone, target));
    expect(storedNextTick(notToday.id) - target).toBeGreaterThanOrEqual(86_400_000 - 3_600_000);
    const [[dailyEvent], [bareEvent], [weeklyEvent]] = await Promise.all([eventsAtLeast(withProps.id, 1), eventsAtLeast(timerOnly.id, 1), eventsAtLeast(weekly.id, 1)]);
    const counts = await Promise.all([withProps, timerOnly, weekly, notToday].map(async (source) => (await eventsOf(server, server.adminKey, source.id)).length));
    await Promise.all([withProps, timerOnly, weekly, notToday].map((source) => remove(source.id)));
    expect(counts).toEqual([1, 1, 1, 0]);
    expect(dailyEvent.event).toMatchObject({ timestamp: target / 1000, time_of_day: at.time, time_zone: timeZone });
    expect(dailyEvent.event.scheduled_time).toMatch(new RegExp(`T${at.time}\\+0[01]:00$`));
    expect(dailyEvent.event.manual).toBeUndefined();
    expect(bareEvent.event).toMatchObject({ time_of_day: at.time, time_zone: timeZone, scheduled_time: dailyEvent.event.scheduled_time });
    expect(weeklyEvent.event).toMatchObject({ days_of_week: [at.weekday], time_of_day: at.time, scheduled_time: dailyEvent.event.scheduled_time });
    expect(dailyEvent.metadata.summary).toBe(`Scheduled at ${dailyEvent.event.scheduled_time}`);
  });

  it("emit a sample tick when run by hand, and show their schedule through the API", async () => {
    const timer = { cron: "30 17 * * MON,FRI", timezone: "America/Sao_Paulo" };
    const weekly = await deploy("weekly", { daysOfWeek: ["friday", "monday"], timeOfDay: "17:30", timeZone: "America/Sao_Paulo", timer }, "weekly by hand");
    expect(weekly.configured_props).toMatchObject({ daysOfWeek: ["friday", "monday"], timeOfDay: "17:30", timeZone: "America/Sao_Paulo", timer: { cron: "30 17 * * MON,FRI", interval_seconds: null, timezone: "America/Sao_Paulo" } });
    expect(wallClock(storedNextTick(weekly.id), "America/Sao_Paulo")).toMatchObject({ time: "17:30:00" });
    const run = await call(server.url, "POST", `/v1/sources/${weekly.id}/run`, { key: server.adminKey, json: {} });
    expect(run.status).toBeLessThan(300);
    const [event] = await eventsAtLeast(weekly.id, 1);
    await remove(weekly.id);
    expect(event.event).toMatchObject({ manual: true, days_of_week: ["friday", "monday"], time_of_day: "17:30", time_zone: "America/Sao_Paulo" });
    expect(event.event.scheduled_time).toMatch(/-03:00$/);
    // With no props, the timer's default: 09:00 UTC (Mondays, for the weekly one).
    const daily = await deploy("daily", {}, "daily by default");
    await remove(daily.id);
    expect(daily.configured_props).toEqual({ timer: { cron: "0 9 * * *", interval_seconds: null, timezone: "UTC" } });
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

  it("refuse a timer that is not the props' schedule, or not a time of day, saying which timer to set", async () => {
    const daily = await deployRefused("daily", { timeOfDay: "09:30", timeZone: "Europe/Paris" });
    expect(daily.status).toBe(400);
    expect(daily.body.error.message).toContain('must match the time of day 09:30 in Europe/Paris (props "timeOfDay" and "timeZone"): set it to { "cron": "30 9 * * *", "timezone": "Europe/Paris" }');
    const weekly = await deployRefused("weekly", { daysOfWeek: ["friday", "monday"], timer: { cron: "0 9 * * 1", timezone: "Asia/Tokyo" } });
    expect(weekly.body.error.message).toContain('set it to { "cron": "0 9 * * 1,5", "timezone": "Asia/Tokyo" } (it is { "cron": "0 9 * * 1", "timezone": "Asia/Tokyo" })');
    const notDaily = await deployRefused("daily", { timer: { cron: "*/5 * * * *", timezone: "UTC" } });
    expect(notDaily.body.error.message).toContain('The prop "timer" of a daily schedule fires once a day');
    const interval = await deployRefused("weekly", { timer: { intervalSeconds: 3600 } });
    expect(interval.body.error.message).toContain("an interval cannot name times of day");
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

  it("emits the ticks the platform fires across daylight saving changes as scheduled, and a run by hand as a sample", async () => {
    const { parseCron } = await load("common/cron.mjs");
    const { emitTick, sameCron } = await load("schedule/common/zoned-schedule.mjs");
    const emitted: any[] = [];
    const source = { $emit: (event: unknown, meta: unknown) => emitted.push({ event, meta }) };
    const timeZone = "America/New_York";
    /** Two days of the platform's own ticks (croner in the zone) from `from`, each emitted. */
    const fire = (cronText: string, from: number) => {
      const schedule = { intervalSeconds: null, cron: cronText, timezone: timeZone };
      const first = firstTick(schedule, from);
      for (const due of [first, nextTickAfter(schedule, first, first)]) emitTick(source, { timestamp: due / 1000, cron: cronText }, { cron: parseCron(cronText), timeZone }, {});
    };
    // 2026-03-08: 02:00 EST jumps to 03:00 EDT, so 02:30 runs at 03:00 that night.
    fire("30 2 * * *", Date.UTC(2026, 2, 7, 12));
    // 2026-11-01: 01:00-02:00 happens twice; 01:30 runs once.
    fire("30 1 * * *", Date.UTC(2026, 9, 31, 12));
    expect(emitted.map((e) => e.event.scheduled_time)).toEqual(["2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"]);
    expect(emitted.filter((e) => e.event.manual)).toEqual([]);
    // A run by hand: the current second, not a time the schedule names.
    emitTick(source, { timestamp: Date.UTC(2026, 10, 27, 15, 4, 7) / 1000 }, { cron: parseCron("30 1 * * *"), timeZone }, {});
    expect(emitted.at(-1).event).toMatchObject({ manual: true, scheduled_time: "2026-11-27T10:04:07-05:00" });
    expect(sameCron(parseCron("30 17 * * MON,FRI"), parseCron("30 17 * * 5,1"))).toBe(true);
    expect(sameCron(parseCron("0 9 * * *"), parseCron("0 9 * * 1-5"))).toBe(false);
  });
});
