import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

const context = { cwd: "/srv/app", stdoutIsTty: false };

describe("loadConfig", () => {
  it("has the embedded defaults", () => {
    const config = loadConfig({}, {}, context);
    expect(config).toEqual({
      dataDir: "/srv/app/.runnel",
      host: "0.0.0.0",
      port: 8080,
      publicUrl: null,
      databaseUrl: null,
      databasePoolSize: 10,
      redisUrl: null,
      queue: "local",
      role: "all",
      queueNamespace: null,
      deliveryLeaseMs: 30_000,
      logLevel: "info",
      logFormat: "json",
      shutdownTimeoutMs: 10_000,
      rateLimitPerMinute: 1_200,
      masterKey: null,
      limits: { httpTimeoutMs: 30_000, runTimeoutMs: 60_000, memoryMb: 256, maxMemoryMb: 1024, maxTimeoutMs: 300_000 },
      maxRunners: 512,
      runnerMemoryMb: 1024,
      npmRegistry: null,
      smtpUrl: null,
      mailFrom: "Runnel <runnel@localhost>",
      smtpListen: null,
      smtpDomain: null,
      smtpMaxMessageBytes: 10 * 1024 * 1024,
      adminEmail: null,
      sandboxNetwork: "policy",
      egressAllow: [],
      sandboxBubblewrap: "auto",
      webhookRetry: { maxAttempts: 8, baseDelayMs: 10_000 },
      sendRetry: { maxAttempts: 8, baseDelayMs: 10_000 },
      maxRunInterruptions: 3,
      pendingRequests: { total: 8_192, perOwner: 2_048 },
      masterKeyFile: null,
      runnerCpuProfileDir: null,
      oauthClients: {},
      metrics: "off",
      heartbeatIntervalMs: 5_000,
      shutdownDrainMs: 0,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("reads RUNNEL_METRICS (1 is admin, 0 is off), the heartbeat interval and the shutdown drain, and names a bad value", () => {
    const metrics = (value: string) => loadConfig({ RUNNEL_METRICS: value }, {}, context).metrics;
    expect([metrics("public"), metrics("admin"), metrics("ADMIN"), metrics("1"), metrics("0"), metrics("off")]).toEqual(["public", "admin", "admin", "admin", "off", "off"]);
    expect(() => metrics("yes")).toThrow(new ConfigError("RUNNEL_METRICS", 'expected one of off, public, admin, got "yes".'));
    expect(loadConfig({ RUNNEL_HEARTBEAT_INTERVAL_MS: "250", RUNNEL_SHUTDOWN_DRAIN_SECONDS: "15" }, {}, context)).toMatchObject({ heartbeatIntervalMs: 250, shutdownDrainMs: 15_000 });
    expect(() => loadConfig({ RUNNEL_HEARTBEAT_INTERVAL_MS: "10" }, {}, context)).toThrow(/RUNNEL_HEARTBEAT_INTERVAL_MS/);
  });

  it("reads the store's PostgreSQL pool size (10 by default), and names a bad one", () => {
    expect(loadConfig({}, {}, context).databasePoolSize).toBe(10);
    expect(loadConfig({ RUNNEL_DATABASE_POOL_SIZE: "3" }, {}, context).databasePoolSize).toBe(3);
    expect(() => loadConfig({ RUNNEL_DATABASE_POOL_SIZE: "0" }, {}, context)).toThrow(new ConfigError("RUNNEL_DATABASE_POOL_SIZE", 'expected a whole number from 1 to 1000, got "0".'));
  });

  it("reads the inbound SMTP listener's address, domain and size limit, and names a bad one", () => {
    const context = { cwd: "/srv", stdoutIsTty: false };
    const config = loadConfig({ RUNNEL_SMTP_LISTEN: "127.0.0.1:2525", RUNNEL_SMTP_DOMAIN: "@Mail.Example.com", RUNNEL_SMTP_MAX_MESSAGE_MB: "2" }, {}, context);
    expect(config).toMatchObject({ smtpListen: { host: "127.0.0.1", port: 2525 }, smtpDomain: "mail.example.com", smtpMaxMessageBytes: 2 * 1024 * 1024 });
    expect(loadConfig({ RUNNEL_SMTP_LISTEN: ":25" }, {}, context).smtpListen).toEqual({ host: "0.0.0.0", port: 25 });
    expect(loadConfig({ RUNNEL_SMTP_LISTEN: "[::1]:0" }, {}, context).smtpListen).toEqual({ host: "::1", port: 0 });
    expect(() => loadConfig({ RUNNEL_SMTP_LISTEN: "2525" }, {}, context)).toThrow(/^RUNNEL_SMTP_LISTEN: expected host:port/);
    expect(() => loadConfig({ RUNNEL_SMTP_LISTEN: "localhost:70000" }, {}, context)).toThrow(/^RUNNEL_SMTP_LISTEN: expected host:port/);
    expect(() => loadConfig({ RUNNEL_SMTP_DOMAIN: "not a domain" }, {}, context)).toThrow(/^RUNNEL_SMTP_DOMAIN: expected the domain/);
    expect(() => loadConfig({ RUNNEL_SMTP_MAX_MESSAGE_MB: "0" }, {}, context)).toThrow(/^RUNNEL_SMTP_MAX_MESSAGE_MB: expected a whole number from 1 to 100/);
  });

  it("reads the environment, and command-line flags win over it", () => {
    const env = {
      RUNNEL_DATA_DIR: "data",
      RUNNEL_PORT: "9000",
      DATABASE_URL: "postgres://u@db:5432/runnel",
      RUNNEL_PUBLIC_URL: "https://runnel.example.com/",
      RUNNEL_LOG_LEVEL: "DEBUG",
    };
    const config = loadConfig(env, { port: "0", dataDir: "/var/runnel" }, { cwd: "/srv", stdoutIsTty: true });
    expect(config).toMatchObject({
      dataDir: "/var/runnel",
      port: 0,
      databaseUrl: "postgres://u@db:5432/runnel",
      publicUrl: "https://runnel.example.com",
      logLevel: "debug",
      logFormat: "pretty",
    });
  });

  it("reads OAuth clients by app slug, and names the half of a pair that is missing", () => {
    const config = loadConfig({ RUNNEL_OAUTH_GITHUB_CLIENT_ID: "Iv1.abc", RUNNEL_OAUTH_GITHUB_CLIENT_SECRET: "s3cret", RUNNEL_OAUTH_MY_CRM_CLIENT_ID: "crm", RUNNEL_OAUTH_MY_CRM_CLIENT_SECRET: "x" }, {}, context);
    expect(config.oauthClients).toEqual({ GITHUB: { clientId: "Iv1.abc", clientSecret: "s3cret" }, MY_CRM: { clientId: "crm", clientSecret: "x" } });
    expect(() => loadConfig({ RUNNEL_OAUTH_SLACK_CLIENT_ID: "only-id" }, {}, context)).toThrow(/^RUNNEL_OAUTH_SLACK_CLIENT_SECRET: is not set, but its pair is/);
  });

  it("reads a master key as hex or base64", () => {
    expect(loadConfig({ RUNNEL_MASTER_KEY: "ab".repeat(32) }, {}, context).masterKey?.length).toBe(32);
    expect(loadConfig({ RUNNEL_MASTER_KEY: Buffer.alloc(32, 7).toString("base64") }, {}, context).masterKey).toEqual(Buffer.alloc(32, 7));
  });

  it("reads the npm registry and ends it with one slash", () => {
    expect(loadConfig({ RUNNEL_NPM_REGISTRY: "http://127.0.0.1:4873" }, {}, context).npmRegistry).toBe("http://127.0.0.1:4873/");
    expect(loadConfig({ RUNNEL_NPM_REGISTRY: "https://npm.example.com/repo//" }, {}, context).npmRegistry).toBe("https://npm.example.com/repo/");
  });

  it("reads the admin's e-mail address, and names the variable of one that is not an address", () => {
    expect(loadConfig({ RUNNEL_ADMIN_EMAIL: " ops@example.com " }, {}, context).adminEmail).toBe("ops@example.com");
    expect(() => loadConfig({ RUNNEL_ADMIN_EMAIL: "ops at example" }, {}, context)).toThrow(/^RUNNEL_ADMIN_EMAIL: expected an address like you@example.com/);
  });

  it("reads the SMTP URL and the sender", () => {
    const config = loadConfig({ RUNNEL_SMTP_URL: "smtp://user:p%40ss@mail.example.com:587", RUNNEL_MAIL_FROM: "Ops <ops@example.com>" }, {}, context);
    expect(config.smtpUrl).toBe("smtp://user:p%40ss@mail.example.com:587");
    expect(config.mailFrom).toBe("Ops <ops@example.com>");
    expect(loadConfig({ RUNNEL_SMTP_URL: "smtps://mail.example.com" }, {}, context).smtpUrl).toBe("smtps://mail.example.com");
  });

  it.each([
    ["http://user:hunter2@mail.example.com", /scheme "http:"/],
    ["user:hunter2@mail.example.com:587", /scheme "user:"/],
    ["smtp://hunter2 @ mail", /not a URL/],
    ["smtp:hunter2", /names no host/],
  ])("refuses the SMTP URL %s without showing its password", (value, reason) => {
    try {
      loadConfig({ RUNNEL_SMTP_URL: value }, {}, context);
      expect.unreachable("loadConfig should have thrown");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe("RUNNEL_SMTP_URL");
      expect((error as ConfigError).message).toMatch(/^RUNNEL_SMTP_URL: expected an SMTP URL like smtp:\/\//);
      expect((error as ConfigError).message).toMatch(reason);
      expect((error as ConfigError).message).not.toContain("hunter2");
    }
  });

  it("reads the number of runners", () => {
    expect(loadConfig({ RUNNEL_MAX_RUNNERS: "16" }, {}, context).maxRunners).toBe(16);
    expect(loadConfig({ RUNNEL_RUNNER_MEMORY_MB: "3000" }, {}, context).runnerMemoryMb).toBe(3000);
    // By default, a quarter of the machine, at least 512 MB.
    expect(loadConfig({}, {}, { ...context, totalMemoryBytes: 16 * 1024 ** 3 }).runnerMemoryMb).toBe(4096);
    expect(loadConfig({}, {}, { ...context, totalMemoryBytes: 1024 ** 3 }).runnerMemoryMb).toBe(512);
  });

  it("treats an empty variable as unset", () => {
    expect(loadConfig({ RUNNEL_PORT: " " }, {}, context).port).toBe(8080);
  });

  it.each([
    [{ RUNNEL_PORT: "80a" }, {}, "RUNNEL_PORT"],
    [{ RUNNEL_PORT: "70000" }, {}, "RUNNEL_PORT"],
    [{}, { port: "-1" }, "--port"],
    [{ DATABASE_URL: "mysql://root@localhost/db" }, {}, "DATABASE_URL"],
    [{ DATABASE_URL: "not a url" }, {}, "DATABASE_URL"],
    [{ RUNNEL_LOG_LEVEL: "loud" }, {}, "RUNNEL_LOG_LEVEL"],
    [{ RUNNEL_LOG_FORMAT: "xml" }, {}, "RUNNEL_LOG_FORMAT"],
    [{ RUNNEL_PUBLIC_URL: "ftp://x" }, {}, "RUNNEL_PUBLIC_URL"],
    [{ RUNNEL_SHUTDOWN_TIMEOUT_SECONDS: "0" }, {}, "RUNNEL_SHUTDOWN_TIMEOUT_SECONDS"],
    [{ RUNNEL_RATE_LIMIT_PER_MINUTE: "lots" }, {}, "RUNNEL_RATE_LIMIT_PER_MINUTE"],
    [{ RUNNEL_HOST: "http://x" }, {}, "RUNNEL_HOST"],
    [{ RUNNEL_MASTER_KEY: "too-short" }, {}, "RUNNEL_MASTER_KEY"],
    [{ RUNNEL_NPM_REGISTRY: "file:///srv/npm" }, {}, "RUNNEL_NPM_REGISTRY"],
    [{ RUNNEL_MAX_RUNNERS: "0" }, {}, "RUNNEL_MAX_RUNNERS"],
    [{ RUNNEL_RUNNER_MEMORY_MB: "10" }, {}, "RUNNEL_RUNNER_MEMORY_MB"],
    [{ RUNNEL_NPM_REGISTRY: "registry.npmjs.org" }, {}, "RUNNEL_NPM_REGISTRY"],
    [{ RUNNEL_MAIL_FROM: "nobody" }, {}, "RUNNEL_MAIL_FROM"],
  ])("rejects %j %j naming %s", (env, overrides, variable) => {
    try {
      loadConfig(env, overrides, context);
      expect.unreachable("loadConfig should have thrown");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe(variable);
      expect((error as ConfigError).message).toMatch(new RegExp(`^${variable}: `));
    }
  });
});

describe("the network settings of user code", () => {
  it("defaults to the policy with nothing extra allowed", () => {
    const config = loadConfig({}, {}, context);
    expect(config.sandboxNetwork).toBe("policy");
    expect(config.egressAllow).toEqual([]);
  });

  it("reads RUNNEL_EGRESS_ALLOW as comma-separated hosts, addresses and ranges", () => {
    const config = loadConfig({ RUNNEL_EGRESS_ALLOW: " db.internal, 10.0.0.0/8 ,,*.corp.example,192.168.1.5 ", RUNNEL_SANDBOX_NETWORK: "Unrestricted" }, {}, context);
    expect(config.egressAllow).toEqual(["db.internal", "10.0.0.0/8", "*.corp.example", "192.168.1.5"]);
    expect(config.sandboxNetwork).toBe("unrestricted");
  });

  it("stops on an entry it cannot read, naming the variable and the entry", () => {
    expect(() => loadConfig({ RUNNEL_EGRESS_ALLOW: "10.0.0.0/8,10.0.0.0/99" }, {}, context)).toThrow(ConfigError);
    expect(() => loadConfig({ RUNNEL_EGRESS_ALLOW: "10.0.0.0/8,10.0.0.0/99" }, {}, context)).toThrow('RUNNEL_EGRESS_ALLOW: "10.0.0.0/99" is not a host name');
    expect(() => loadConfig({ RUNNEL_SANDBOX_NETWORK: "open" }, {}, context)).toThrow('RUNNEL_SANDBOX_NETWORK: expected one of policy, unrestricted, got "open".');
  });
});

describe("the ceilings on what user code may ask for", () => {
  it("default to 1,024 MB and 300 s, and can be raised", () => {
    expect(loadConfig({}, {}, context).limits).toMatchObject({ maxMemoryMb: 1024, maxTimeoutMs: 300_000 });
    expect(loadConfig({ RUNNEL_MAX_MEMORY_MB: "4096", RUNNEL_MAX_TIMEOUT_SECONDS: "3600", RUNNEL_RUN_TIMEOUT_SECONDS: "900" }, {}, context).limits).toMatchObject({
      maxMemoryMb: 4096,
      maxTimeoutMs: 3_600_000,
      runTimeoutMs: 900_000,
    });
  });

  it("refuse defaults over them, naming both settings", () => {
    expect(() => loadConfig({ RUNNEL_MEMORY_MB: "2048" }, {}, context)).toThrow("RUNNEL_MEMORY_MB: the default heap (2048 MB) is over the ceiling RUNNEL_MAX_MEMORY_MB (1024 MB)");
    expect(() => loadConfig({ RUNNEL_RUN_TIMEOUT_SECONDS: "600" }, {}, context)).toThrow("RUNNEL_RUN_TIMEOUT_SECONDS: 600 s is over the ceiling RUNNEL_MAX_TIMEOUT_SECONDS (300 s)");
  });
});

describe("the runners' profiling mode", () => {
  it("is off unless RUNNEL_RUNNER_CPU_PROF names an absolute folder, and says so when it does not", () => {
    expect(loadConfig({}, {}, context).runnerCpuProfileDir).toBeNull();
    expect(loadConfig({ RUNNEL_RUNNER_CPU_PROF: " " }, {}, context).runnerCpuProfileDir).toBeNull();
    expect(loadConfig({ RUNNEL_RUNNER_CPU_PROF: "/tmp/profiles/" }, {}, context).runnerCpuProfileDir).toBe("/tmp/profiles");
    expect(() => loadConfig({ RUNNEL_RUNNER_CPU_PROF: "profiles" }, {}, context)).toThrow(/^RUNNEL_RUNNER_CPU_PROF: expected an absolute folder path .*got "profiles"/);
  });
});

describe("the master key's file", () => {
  it("is RUNNEL_MASTER_KEY_FILE, resolved against the working folder", () => {
    expect(loadConfig({ RUNNEL_MASTER_KEY_FILE: "keys/runnel.key" }, {}, context).masterKeyFile).toBe("/srv/app/keys/runnel.key");
    expect(loadConfig({}, {}, context).masterKeyFile).toBeNull();
  });

  it("cannot be set beside RUNNEL_MASTER_KEY, and the error shows neither value", () => {
    const key = "ab".repeat(32);
    expect(() => loadConfig({ RUNNEL_MASTER_KEY: key, RUNNEL_MASTER_KEY_FILE: "/k" }, {}, context)).toThrow("RUNNEL_MASTER_KEY_FILE: RUNNEL_MASTER_KEY is set too; set one of the two.");
    try {
      loadConfig({ RUNNEL_MASTER_KEY: key, RUNNEL_MASTER_KEY_FILE: "/k" }, {}, context);
    } catch (error) {
      expect((error as Error).message).not.toContain(key);
    }
  });
});
