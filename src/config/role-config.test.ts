import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

const context = { cwd: "/srv/app", stdoutIsTty: false };
const DATABASE_URL = "postgres://runnel@db:5432/runnel";
const REDIS_URL = "redis://cache:6379";

function errorOf(env: Record<string, string>, overrides: { role?: string } = {}): ConfigError {
  try {
    loadConfig(env, overrides, context);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig: the process's role (RUNNEL_ROLE, --role)", () => {
  it("is all by default, with or without a shared queue", () => {
    expect(loadConfig({}, {}, context).role).toBe("all");
    expect(loadConfig({ DATABASE_URL, RUNNEL_QUEUE: "redis", REDIS_URL }, {}, context).role).toBe("all");
    expect(loadConfig({ DATABASE_URL, RUNNEL_QUEUE: "postgres" }, {}, context).role).toBe("all");
  });

  it("takes api or worker with a shared queue and store; the flag wins over the variable", () => {
    expect(loadConfig({ DATABASE_URL, RUNNEL_QUEUE: "redis", REDIS_URL, RUNNEL_ROLE: "API" }, {}, context).role).toBe("api");
    expect(loadConfig({ DATABASE_URL, RUNNEL_QUEUE: "postgres", RUNNEL_ROLE: "api" }, { role: "worker" }, context).role).toBe("worker");
  });

  it("names RUNNEL_QUEUE when api or worker has no shared queue", () => {
    const api = errorOf({ DATABASE_URL, RUNNEL_ROLE: "api" });
    expect(api.variable).toBe("RUNNEL_QUEUE");
    expect(api.message).toMatch(/^RUNNEL_QUEUE: is not set, but RUNNEL_ROLE is "api": .*RUNNEL_QUEUE=redis \(with REDIS_URL\) or RUNNEL_QUEUE=postgres/);
    const local = errorOf({ DATABASE_URL, RUNNEL_QUEUE: "local" }, { role: "worker" });
    expect(local.message).toMatch(/^RUNNEL_QUEUE: is "local", but --role is "worker"/);
  });

  it("names DATABASE_URL when api or worker has no shared store", () => {
    expect(errorOf({ RUNNEL_QUEUE: "redis", REDIS_URL, RUNNEL_ROLE: "worker" }).variable).toBe("DATABASE_URL");
  });

  it("names an unknown role and the ones there are", () => {
    expect(errorOf({}, { role: "both" }).message).toBe('--role: expected one of all, api, worker, got "both".');
  });
});

describe("loadConfig: RUNNEL_QUEUE_NAMESPACE", () => {
  it("is unset by default, and taken when it is a plain name", () => {
    expect(loadConfig({}, {}, context).queueNamespace).toBeNull();
    expect(loadConfig({ RUNNEL_QUEUE_NAMESPACE: "runnel_staging" }, {}, context).queueNamespace).toBe("runnel_staging");
  });

  it("refuses what is no Redis prefix and PostgreSQL schema name at once", () => {
    for (const bad of ["Runnel", "1runnel", "runnel-prod", "run nel", "a".repeat(49)]) {
      expect(errorOf({ RUNNEL_QUEUE_NAMESPACE: bad }).message).toMatch(/^RUNNEL_QUEUE_NAMESPACE: expected lower-case letters, digits and _/);
    }
  });
});
