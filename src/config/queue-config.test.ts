import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

const context = { cwd: "/srv/app", stdoutIsTty: false };
const DATABASE_URL = "postgres://runnel@db:5432/runnel";

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env, {}, context);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig: the job queue (RUNNEL_QUEUE, REDIS_URL)", () => {
  it("is the store's own queue by default", () => {
    expect(loadConfig({}, {}, context)).toMatchObject({ queue: "local", redisUrl: null });
    expect(loadConfig({ DATABASE_URL }, {}, context)).toMatchObject({ queue: "local", redisUrl: null });
  });

  it("runs on Redis when asked by name; a REDIS_URL alone changes nothing", () => {
    expect(loadConfig({ DATABASE_URL, RUNNEL_QUEUE: "redis", REDIS_URL: "redis://cache:6379/2" }, {}, context)).toMatchObject({ queue: "redis", redisUrl: "redis://cache:6379/2" });
    expect(loadConfig({ DATABASE_URL, RUNNEL_QUEUE: "Redis", REDIS_URL: "rediss://:secret@cache:6380" }, {}, context)).toMatchObject({ queue: "redis", redisUrl: "rediss://:secret@cache:6380" });
    expect(loadConfig({ REDIS_URL: "redis://cache:6379" }, {}, context)).toMatchObject({ queue: "local", redisUrl: "redis://cache:6379" });
  });

  it("runs on PostgreSQL alone", () => {
    expect(loadConfig({ DATABASE_URL, RUNNEL_QUEUE: "postgres" }, {}, context)).toMatchObject({ queue: "postgres", redisUrl: null });
  });

  it("names REDIS_URL when the queue is on Redis without it", () => {
    const error = errorOf({ DATABASE_URL, RUNNEL_QUEUE: "redis" });
    expect(error.variable).toBe("REDIS_URL");
    expect(error.message).toMatch(/^REDIS_URL: is not set, but RUNNEL_QUEUE is "redis": set it to .*redis:\/\/host:6379/);
  });

  it("names a bad REDIS_URL without repeating it (it may hold a password)", () => {
    const bad = errorOf({ DATABASE_URL, REDIS_URL: "http://:hunter2@cache:6379" });
    expect(bad.variable).toBe("REDIS_URL");
    expect(bad.message).toMatch(/^REDIS_URL: expected a Redis URL like redis:\/\/host:6379.*got the scheme "http:"/);
    expect(bad.message).not.toContain("hunter2");
    expect(errorOf({ DATABASE_URL, REDIS_URL: "cache:hunter2" }).message).toMatch(/^REDIS_URL: expected a Redis URL/);
    expect(errorOf({ DATABASE_URL, REDIS_URL: "not a url" }).message).toMatch(/^REDIS_URL: .*the value is not a URL/);
  });

  it("names a RUNNEL_QUEUE it does not know", () => {
    expect(errorOf({ RUNNEL_QUEUE: "kafka" }).message).toBe('RUNNEL_QUEUE: expected one of local, redis, postgres, got "kafka".');
  });

  it("names DATABASE_URL when a shared queue would sit over each process's own SQLite file", () => {
    const asked = errorOf({ RUNNEL_QUEUE: "postgres" });
    expect(asked.variable).toBe("DATABASE_URL");
    expect(asked.message).toMatch(/^DATABASE_URL: is not set, but RUNNEL_QUEUE is "postgres": .*postgres:\/\/user@host:5432\/database.*unset RUNNEL_QUEUE/);
    expect(errorOf({ RUNNEL_QUEUE: "redis", REDIS_URL: "redis://cache:6379" }).variable).toBe("DATABASE_URL");
  });
});
