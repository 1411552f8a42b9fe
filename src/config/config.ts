import { DEFAULT_ADMISSION_LIMITS } from "../domain/admission-limits.js";
import { isAbsolute, resolve } from "node:path";
import { EMAIL_RULE, isValidEmail } from "../domain/accounts.js";
import { createEgressPolicy, EgressAllowListError } from "../domain/egress-policy.js";

/**
 * The server's configuration, parsed and validated once at start-up into this
 * frozen object. Nothing else in the server reads environment variables.
 */
export interface RunnelConfig {
  /** Folder for the SQLite file, the admin key and other local state (absolute). */
  readonly dataDir: string;
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  /** Address clients and webhooks use to reach this server; derived from host and port when unset. */
  readonly publicUrl: string | null;
  /** `postgres://…` to run on PostgreSQL; null for the embedded SQLite store. */
  readonly databaseUrl: string | null;
  /**
   * RUNNEL_DATABASE_POOL_SIZE: the most connections this process's store
   * holds to DATABASE_URL (10). Every process of an installation holds its
   * own, and PostgreSQL allows 100 in all by default (docs/scale-out.md,
   * "Things an operator should already know").
   */
  readonly databasePoolSize: number;
  /** REDIS_URL: `redis://…` or `rediss://…`, the Redis of the BullMQ job queue (RUNNEL_QUEUE=redis); null: none. */
  readonly redisUrl: string | null;
  /**
   * RUNNEL_QUEUE: where work waits. "local" (the embedded default): the
   * store's own queue, one process. "redis": BullMQ on REDIS_URL, and
   * "postgres": BullMQ on DATABASE_URL alone; both for processes on many
   * machines over PostgreSQL. Always asked for by name: a REDIS_URL left
   * in the environment for something else never turns a server into a cluster.
   */
  readonly queue: "local" | "redis" | "postgres";
  /**
   * RUNNEL_ROLE / `--role`: what this process does. "all" (the default):
   * everything, as one process does. "api": /v1, the endpoints, SSE and the
   * console, no runs of its own. "worker": the delivery worker, timers and
   * sends, serving only /healthz, /readyz (and /metrics). api and worker
   * need a shared queue and store (RUNNEL_QUEUE, DATABASE_URL).
   */
  readonly role: ProcessRole;
  /**
   * RUNNEL_QUEUE_NAMESPACE: this installation's corner of a shared queue
   * backend (the Redis key prefix, or the PostgreSQL schema of BullMQ's
   * tables); null: "runnel" on Redis, "runnel_queue" on PostgreSQL. Two
   * installations on one Redis or database need one each.
   */
  readonly queueNamespace: string | null;
  /**
   * RUNNEL_DELIVERY_LEASE_SECONDS (default 30): how long a delivery a
   * worker claimed stays its own after the worker's last renewal. A live
   * worker renews its claims every third of it, so a run may last longer;
   * a worker that dies stops renewing, and another takes its runs over
   * about one lease later. Shorter: a dead worker's runs resume sooner, and
   * a worker stalled longer than it (a frozen VM) loses them to another.
   */
  readonly deliveryLeaseMs: number;
  readonly logLevel: LogLevel;
  readonly logFormat: "json" | "pretty";
  readonly shutdownTimeoutMs: number;
  /** Requests per minute per API key on /v1; 0 turns the limit off. */
  readonly rateLimitPerMinute: number;
  /** 32-byte key that encrypts secret props; null: read from `masterKeyFile`, or made once in the data folder. */
  readonly masterKey: Buffer | null;
  /** RUNNEL_MASTER_KEY_FILE: a file holding the master key, kept apart from the data (absolute path); null: `<data>/master-key`. */
  readonly masterKeyFile: string | null;
  /**
   * RUNNEL_RUNNER_CPU_PROF: a folder (absolute) where each runner writes a
   * CPU profile when it exits; null: off. For developers only: runners then
   * run without Node's permission model (sandbox/cpu-profile.ts says why).
   */
  readonly runnerCpuProfileDir: string | null;
  /**
   * Limits of user code: time per HTTP-triggered run, per timer or manual
   * run, and heap; and the ceilings on what a source may ask for itself.
   */
  readonly limits: { readonly httpTimeoutMs: number; readonly runTimeoutMs: number; readonly memoryMb: number; readonly maxMemoryMb: number; readonly maxTimeoutMs: number };
  /** Runner processes at most, busy and idle, whatever memory allows (each serves one owner's components). */
  readonly maxRunners: number;
  /** RUNNEL_RUNNER_MEMORY_MB: memory of all runners together; past it, idle runners are stopped and new owners wait. */
  readonly runnerMemoryMb: number;
  /** npm registry that component imports are resolved from (ends with `/`); null: the one npm is configured with. */
  readonly npmRegistry: string | null;
  /** `smtp://user:pass@host:587` or `smtps://…` to deliver mail; null: mails stay in the outbox. */
  readonly smtpUrl: string | null;
  /** The From of every mail Runnel sends. */
  readonly mailFrom: string;
  /**
   * RUNNEL_SMTP_LISTEN: where Runnel's own SMTP listener takes inbound mail
   * for `email-new-email` sources (`host:port`); null (the default): no listener.
   */
  readonly smtpListen: { readonly host: string; readonly port: number } | null;
  /** RUNNEL_SMTP_DOMAIN: the only domain inbound mail is taken for; null: any (only the address's token is checked). */
  readonly smtpDomain: string | null;
  /** RUNNEL_SMTP_MAX_MESSAGE_MB, in bytes: the largest inbound message taken. */
  readonly smtpMaxMessageBytes: number;
  /** RUNNEL_ADMIN_EMAIL: the admin's address, given to the admin made on first start (or to an admin that has none yet). */
  readonly adminEmail: string | null;
  /**
   * What user code (and `$.send.http`) may connect to: "policy" (the public
   * internet and `egressAllow`, enforced outside the runner) or
   * "unrestricted" (the server's own network, the admin's explicit choice).
   */
  readonly sandboxNetwork: "policy" | "unrestricted";
  /** RUNNEL_EGRESS_ALLOW: host names, addresses and CIDR ranges user code may reach beyond the public internet. */
  readonly egressAllow: readonly string[];
  /** A workflow run cut off this many times by its process dying is recorded as an error instead of being run again. */
  readonly maxRunInterruptions: number;
  /**
   * RUNNEL_MAX_PENDING_REQUESTS and RUNNEL_MAX_PENDING_REQUESTS_PER_OWNER:
   * endpoint requests waiting for their runs, in all and of one account;
   * past either, a request is answered 503 with Retry-After at once.
   */
  readonly pendingRequests: { readonly total: number; readonly perOwner: number };
  /** RUNNEL_WEBHOOK_MAX_ATTEMPTS and RUNNEL_WEBHOOK_RETRY_BASE_MS: attempts per event to a webhook, and the wait after the first failure (doubled after each). */
  readonly webhookRetry: { readonly maxAttempts: number; readonly baseDelayMs: number };
  /** RUNNEL_SEND_MAX_ATTEMPTS and RUNNEL_SEND_RETRY_BASE_MS: attempts per `$.send.*` call, and the wait after the first failure (doubled after each, at most an hour). */
  readonly sendRetry: { readonly maxAttempts: number; readonly baseDelayMs: number };
  /** RUNNEL_SANDBOX_BUBBLEWRAP: "auto" runs runners under bubblewrap where it works; "off" never (the permission model alone). */
  readonly sandboxBubblewrap: "auto" | "off";
  /**
   * RUNNEL_OAUTH_<SLUG>_CLIENT_ID and RUNNEL_OAUTH_<SLUG>_CLIENT_SECRET: OAuth
   * clients for unattended set-ups, by app slug (`<SLUG>` is the slug upper-cased,
   * `-` as `_`: RUNNEL_OAUTH_GITHUB_CLIENT_ID). One set through the API wins.
   */
  readonly oauthClients: Readonly<Record<string, { readonly clientId: string; readonly clientSecret: string }>>;
  /**
   * RUNNEL_METRICS: GET /metrics in Prometheus' format. "off" (unset, the
   * default): no such route; "public": open to anyone who reaches the port;
   * "admin" (or "1"): an admin's API key as Bearer.
   */
  readonly metrics: "off" | "public" | "admin";
  /** RUNNEL_HEARTBEAT_INTERVAL_MS: how often this process beats in the process registry (lost after 6 missed beats). */
  readonly heartbeatIntervalMs: number;
  /**
   * RUNNEL_SHUTDOWN_DRAIN_SECONDS: on a graceful stop, how long /readyz answers
   * 503 while the server still serves, before the listener closes, so that a
   * load balancer stops sending first. 0 (the default): close at once.
   */
  readonly shutdownDrainMs: number;
}

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** Values given on the command line; they win over the environment. */
/** What one server process does (see RunnelConfig.role). */
export type ProcessRole = "all" | "api" | "worker";

export interface ConfigOverrides {
  role?: string | undefined;
  dataDir?: string | undefined;
  host?: string | undefined;
  port?: string | undefined;
}

export interface ConfigContext {
  cwd: string;
  /** The machine's memory (os.totalmem()): runners get a share of it by default. */
  totalMemoryBytes?: number;
  /** Whether standard output is a terminal: people get readable logs, machines JSON. */
  stdoutIsTty: boolean;
}

/** A configuration value that cannot be used; `variable` names where it came from. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = "ConfigError";
  }
}

type Env = Readonly<Record<string, string | undefined>>;
type RawValue = { variable: string; value: string | undefined };

export function loadConfig(env: Env, overrides: ConfigOverrides, context: ConfigContext): RunnelConfig {
  const raw = (variable: string, override?: string): { variable: string; value: string | undefined } => {
    if (override !== undefined) return { variable: flagNameFor(variable), value: override };
    const value = env[variable];
    return { variable, value: value === undefined || value.trim() === "" ? undefined : value.trim() };
  };

  const dataDir = raw("RUNNEL_DATA_DIR", overrides.dataDir);
  const config: RunnelConfig = {
    dataDir: resolveDir(dataDir.value ?? ".runnel", context.cwd),
    host: parseHost(raw("RUNNEL_HOST", overrides.host), "0.0.0.0"),
    port: parseInteger(raw("RUNNEL_PORT", overrides.port), 8080, 0, 65_535),
    publicUrl: parseHttpUrl(raw("RUNNEL_PUBLIC_URL")),
    databaseUrl: parseDatabaseUrl(raw("DATABASE_URL")),
    databasePoolSize: parseInteger(raw("RUNNEL_DATABASE_POOL_SIZE"), 10, 1, 1_000),
    ...parseQueue(raw("RUNNEL_QUEUE"), raw("REDIS_URL"), raw("DATABASE_URL")),
    queueNamespace: parseQueueNamespace(raw("RUNNEL_QUEUE_NAMESPACE")),
    deliveryLeaseMs: parseInteger(raw("RUNNEL_DELIVERY_LEASE_SECONDS"), 30, 5, 86_400) * 1000,
    role: parseRole(raw("RUNNEL_ROLE", overrides.role), raw("RUNNEL_QUEUE"), raw("DATABASE_URL")),
    logLevel: parseChoice(raw("RUNNEL_LOG_LEVEL"), LOG_LEVELS, "info"),
    logFormat: parseChoice(raw("RUNNEL_LOG_FORMAT"), ["json", "pretty"] as const, context.stdoutIsTty ? "pretty" : "json"),
    shutdownTimeoutMs: parseInteger(raw("RUNNEL_SHUTDOWN_TIMEOUT_SECONDS"), 10, 1, 3_600) * 1000,
    rateLimitPerMinute: parseInteger(raw("RUNNEL_RATE_LIMIT_PER_MINUTE"), 1_200, 0, 10_000_000),
    masterKey: parseKey(raw("RUNNEL_MASTER_KEY")),
    masterKeyFile: parseKeyFile(raw("RUNNEL_MASTER_KEY"), raw("RUNNEL_MASTER_KEY_FILE"), context.cwd),
    runnerCpuProfileDir: parseAbsoluteFolder(raw("RUNNEL_RUNNER_CPU_PROF"), "the runners' CPU profiles"),
    limits: parseLimits(raw),
    maxRunners: parseInteger(raw("RUNNEL_MAX_RUNNERS"), 512, 1, 4_096),
    runnerMemoryMb: parseInteger(raw("RUNNEL_RUNNER_MEMORY_MB"), defaultRunnerMemoryMb(context.totalMemoryBytes), 64, 1_048_576),
    npmRegistry: parseRegistryUrl(raw("RUNNEL_NPM_REGISTRY")),
    smtpUrl: parseSmtpUrl(raw("RUNNEL_SMTP_URL")),
    mailFrom: parseMailFrom(raw("RUNNEL_MAIL_FROM"), "Runnel <runnel@localhost>"),
    smtpListen: parseListenAddress(raw("RUNNEL_SMTP_LISTEN")),
    smtpDomain: parseMailDomain(raw("RUNNEL_SMTP_DOMAIN")),
    smtpMaxMessageBytes: parseInteger(raw("RUNNEL_SMTP_MAX_MESSAGE_MB"), 10, 1, 100) * 1024 * 1024,
    adminEmail: parseEmail(raw("RUNNEL_ADMIN_EMAIL")),
    sandboxNetwork: parseChoice(raw("RUNNEL_SANDBOX_NETWORK"), ["policy", "unrestricted"] as const, "policy"),
    egressAllow: parseEgressAllow(raw("RUNNEL_EGRESS_ALLOW")),
    maxRunInterruptions: parseInteger(raw("RUNNEL_MAX_RUN_INTERRUPTIONS"), 3, 1, 100),
    pendingRequests: {
      total: parseInteger(raw("RUNNEL_MAX_PENDING_REQUESTS"), DEFAULT_ADMISSION_LIMITS.total, 1, 10_000_000),
      perOwner: parseInteger(raw("RUNNEL_MAX_PENDING_REQUESTS_PER_OWNER"), DEFAULT_ADMISSION_LIMITS.perOwner, 1, 10_000_000),
    },
    sandboxBubblewrap: parseChoice(raw("RUNNEL_SANDBOX_BUBBLEWRAP"), ["auto", "off"] as const, "auto"),
    webhookRetry: Object.freeze({
      maxAttempts: parseInteger(raw("RUNNEL_WEBHOOK_MAX_ATTEMPTS"), 8, 1, 100),
      baseDelayMs: parseInteger(raw("RUNNEL_WEBHOOK_RETRY_BASE_MS"), 10_000, 10, 3_600_000),
    }),
    sendRetry: Object.freeze({
      maxAttempts: parseInteger(raw("RUNNEL_SEND_MAX_ATTEMPTS"), 8, 1, 100),
      baseDelayMs: parseInteger(raw("RUNNEL_SEND_RETRY_BASE_MS"), 10_000, 10, 3_600_000),
    }),
    oauthClients: parseOAuthClients(env, raw),
    metrics: parseMetrics(raw("RUNNEL_METRICS")),
    heartbeatIntervalMs: parseInteger(raw("RUNNEL_HEARTBEAT_INTERVAL_MS"), 5_000, 100, 60_000),
    shutdownDrainMs: parseInteger(raw("RUNNEL_SHUTDOWN_DRAIN_SECONDS"), 0, 0, 300) * 1000,
  };
  return Object.freeze(config);
}

/** The defaults must fit under the ceilings: a server whose own defaults break its rules is refused at start. */
function parseLimits(raw: (variable: string) => RawValue): RunnelConfig["limits"] {
  const maxMemoryMb = parseInteger(raw("RUNNEL_MAX_MEMORY_MB"), 1_024, 32, 65_536);
  const maxTimeoutSeconds = parseInteger(raw("RUNNEL_MAX_TIMEOUT_SECONDS"), 300, 1, 86_400);
  const memory = raw("RUNNEL_MEMORY_MB");
  const memoryMb = parseInteger(memory, 256, 32, 16_384);
  if (memoryMb > maxMemoryMb) throw new ConfigError(memory.value === undefined ? "RUNNEL_MAX_MEMORY_MB" : memory.variable, `the default heap (${memoryMb} MB) is over the ceiling RUNNEL_MAX_MEMORY_MB (${maxMemoryMb} MB); lower one or raise the other.`);
  const timeouts: Array<[string, number]> = [
    ["RUNNEL_HTTP_TIMEOUT_SECONDS", 30],
    ["RUNNEL_RUN_TIMEOUT_SECONDS", 60],
  ];
  const [httpSeconds, runSeconds] = timeouts.map(([variable, fallback]) => {
    const given = raw(variable);
    const seconds = parseInteger(given, fallback, 1, 86_400);
    if (seconds > maxTimeoutSeconds) throw new ConfigError(variable, `${seconds} s is over the ceiling RUNNEL_MAX_TIMEOUT_SECONDS (${maxTimeoutSeconds} s); lower one or raise the other.`);
    return seconds;
  }) as [number, number];
  return Object.freeze({ httpTimeoutMs: httpSeconds * 1000, runTimeoutMs: runSeconds * 1000, memoryMb, maxMemoryMb, maxTimeoutMs: maxTimeoutSeconds * 1000 });
}

/** A quarter of the machine, at least 512 MB: the server, its store and the system keep the rest. */
function defaultRunnerMemoryMb(totalMemoryBytes: number | undefined): number {
  if (totalMemoryBytes === undefined || !Number.isFinite(totalMemoryBytes) || totalMemoryBytes <= 0) return 1_024;
  return Math.max(512, Math.floor(totalMemoryBytes / 4 / (1024 * 1024)));
}

/** "1" is the short form of "admin": metrics on, behind the admin key (the safe choice). */
function parseMetrics(raw: RawValue): RunnelConfig["metrics"] {
  if (raw.value === "1") return "admin";
  if (raw.value === "0") return "off";
  return parseChoice(raw, ["off", "public", "admin"] as const, "off");
}

function flagNameFor(variable: string): string {
  const flags: Record<string, string> = { RUNNEL_DATA_DIR: "--data-dir", RUNNEL_HOST: "--host", RUNNEL_PORT: "--port", RUNNEL_ROLE: "--role" };
  return flags[variable] ?? variable;
}

function parseKey({ variable, value }: RawValue): Buffer | null {
  if (value === undefined) return null;
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, "hex");
  const decoded = Buffer.from(value, "base64");
  if (decoded.length !== 32) {
    throw new ConfigError(variable, "expected 32 random bytes as 64 hex characters or base64 (make one with `openssl rand -hex 32`).");
  }
  return decoded;
}

function resolveDir(value: string, cwd: string): string {
  return isAbsolute(value) ? value : resolve(cwd, value);
}

function parseInteger(
  { variable, value }: RawValue,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(variable, `expected a whole number from ${min} to ${max}, got "${value}".`);
  }
  return Number(value);
}

function parseChoice<T extends string>(
  { variable, value }: RawValue,
  choices: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  const lower = value.toLowerCase() as T;
  if (!choices.includes(lower)) {
    throw new ConfigError(variable, `expected one of ${choices.join(", ")}, got "${value}".`);
  }
  return lower;
}

function parseHost({ variable, value }: RawValue, fallback: string): string {
  if (value === undefined) return fallback;
  if (/[\s/]/.test(value)) {
    throw new ConfigError(variable, `expected a host name or IP address to listen on (like 127.0.0.1), got "${value}".`);
  }
  return value;
}

/** Parses a URL setting; `what` describes the expected kind in the error ("a PostgreSQL URL like …"). */
function parseUrl({ variable, value }: RawValue, what: string, schemes: string[], schemeHint: string): URL | null {
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, `expected ${what}, got "${value}".`);
  }
  if (!schemes.includes(url.protocol)) {
    throw new ConfigError(variable, `${schemeHint}, got the scheme "${url.protocol}".`);
  }
  return url;
}

function parseHttpUrl(raw: RawValue): string | null {
  const url = parseUrl(raw, "an http(s) URL like https://runnel.example.com", ["http:", "https:"], "expected an http(s) URL");
  return url ? raw.value!.replace(/\/+$/, "") : null;
}

function parseRegistryUrl(raw: RawValue): string | null {
  const url = parseUrl(raw, "an npm registry URL like https://registry.npmjs.org/", ["http:", "https:"], "expected an http(s) registry URL");
  // Package paths are appended to it, so it must end with one slash, as npm writes it.
  return url ? `${raw.value!.replace(/\/+$/, "")}/` : null;
}

function parseDatabaseUrl(raw: RawValue): string | null {
  const url = parseUrl(
    raw,
    "a PostgreSQL URL like postgres://user@host:5432/database",
    ["postgres:", "postgresql:"],
    "only PostgreSQL is supported (postgres://…); unset it to use the embedded SQLite store",
  );
  return url ? raw.value! : null;
}

/**
 * The job queue and its Redis. A shared queue needs a shared store too: a
 * queue on Redis or PostgreSQL over each process's own SQLite file would
 * hand one process's work to another that cannot see it.
 */
function parseQueue(queue: RawValue, redis: RawValue, database: RawValue): Pick<RunnelConfig, "queue" | "redisUrl"> {
  const redisUrl = parseRedisUrl(redis);
  const kind = parseChoice(queue, ["local", "redis", "postgres"] as const, "local");
  if (kind === "redis" && !redisUrl) {
    throw new ConfigError(redis.variable, `is not set, but ${queue.variable} is "redis": set it to the Redis of the job queue (redis://host:6379), or set ${queue.variable}=postgres to use PostgreSQL alone.`);
  }
  if (kind !== "local" && database.value === undefined) {
    throw new ConfigError(database.variable, `is not set, but ${queue.variable} is "${kind}": processes sharing a job queue must share their state too; set it to a PostgreSQL URL (postgres://user@host:5432/database), or unset ${queue.variable} to run as one process.`);
  }
  return { queue: kind, redisUrl };
}

/** A Redis key prefix and a PostgreSQL schema name at once: lower-case letters, digits and _, starting with a letter. */
function parseQueueNamespace({ variable, value }: RawValue): string | null {
  if (value === undefined) return null;
  if (!/^[a-z][a-z0-9_]{0,47}$/.test(value)) throw new ConfigError(variable, `expected lower-case letters, digits and _ (a letter first, at most 48), like runnel_prod; got "${value}".`);
  return value;
}

/**
 * The process's role. api and worker are halves of an installation: they
 * meet only through a shared store and queue, so each needs both named
 * (parseQueue already refuses a shared queue without DATABASE_URL).
 */
function parseRole(role: RawValue, queue: RawValue, database: RawValue): ProcessRole {
  const kind = parseChoice(role, ["all", "api", "worker"] as const, "all");
  if (kind === "all") return kind;
  const queueKind = queue.value?.toLowerCase();
  if (queueKind !== "redis" && queueKind !== "postgres") {
    const given = queue.value === undefined ? "is not set" : `is "${queue.value}"`;
    throw new ConfigError(
      queue.variable,
      `${given}, but ${role.variable} is "${kind}": api and worker processes meet through a shared job queue; set ${queue.variable}=redis (with REDIS_URL) or ${queue.variable}=postgres (PostgreSQL alone), and DATABASE_URL, or run with ${role.variable}=all as one process.`,
    );
  }
  if (database.value === undefined) {
    throw new ConfigError(database.variable, `is not set, but ${role.variable} is "${kind}": api and worker processes share one PostgreSQL database; set it (postgres://user@host:5432/database).`);
  }
  return kind;
}

/** A Redis URL may carry a password: errors name the variable and the problem, never the value. */
function parseRedisUrl({ variable, value }: RawValue): string | null {
  if (value === undefined) return null;
  const example = "redis://host:6379 (or rediss://… for TLS; a password as redis://:password@host:6379)";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, `expected a Redis URL like ${example}; the value is not a URL.`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new ConfigError(variable, `expected a Redis URL like ${example}, got the scheme "${url.protocol}".`);
  }
  if (!url.hostname) throw new ConfigError(variable, `expected a Redis URL like ${example}; the URL names no host.`);
  return value;
}

/** An SMTP URL carries a password: errors name the variable and the problem, never the value. */
function parseSmtpUrl({ variable, value }: RawValue): string | null {
  if (value === undefined) return null;
  const example = "smtp://user:password@smtp.example.com:587 (or smtps://… for TLS from the start)";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, `expected an SMTP URL like ${example}; the value is not a URL.`);
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") {
    throw new ConfigError(variable, `expected an SMTP URL like ${example}, got the scheme "${url.protocol}".`);
  }
  if (!url.hostname) {
    throw new ConfigError(variable, `expected an SMTP URL like ${example}; the URL names no host.`);
  }
  return value;
}

function parseMailFrom({ variable, value }: RawValue, fallback: string): string {
  if (value === undefined) return fallback;
  if (!value.includes("@") || /[\r\n]/.test(value)) {
    throw new ConfigError(variable, `expected a sender address like "Runnel <runnel@example.com>", got "${value}".`);
  }
  return value;
}

/** `host:port` (`[::1]:2525` for IPv6; `:2525` listens everywhere); port 0 picks a free one (tests). */
function parseListenAddress({ variable, value }: RawValue): { host: string; port: number } | null {
  if (value === undefined) return null;
  const parts = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:/[\]]*)):(\d{1,5})$/.exec(value);
  const port = parts ? Number(parts[3]) : NaN;
  if (!parts || port > 65_535) {
    throw new ConfigError(variable, `expected host:port to take inbound mail on, such as 0.0.0.0:25 or 127.0.0.1:2525, got "${value}".`);
  }
  return Object.freeze({ host: parts[1] ?? (parts[2] || "0.0.0.0"), port });
}

function parseMailDomain({ variable, value }: RawValue): string | null {
  if (value === undefined) return null;
  const domain = value.replace(/^@/, "").toLowerCase();
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/.test(domain)) {
    throw new ConfigError(variable, `expected the domain inbound mail is addressed to, such as mail.example.com, got "${value}".`);
  }
  return domain;
}

function parseEmail({ variable, value }: RawValue): string | null {
  if (value === undefined) return null;
  if (!isValidEmail(value)) throw new ConfigError(variable, `expected ${EMAIL_RULE}, got "${value}".`);
  return value;
}

/** Comma-separated host names, addresses and CIDR ranges; each is checked here so that a typo stops the start, naming it. */
function parseEgressAllow({ variable, value }: RawValue): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  const entries = value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
  try {
    createEgressPolicy(entries);
  } catch (error) {
    if (error instanceof EgressAllowListError) throw new ConfigError(variable, error.message);
    throw error;
  }
  return Object.freeze(entries);
}

/** A key file, unless the key itself is given too: two sources of one key would be a trap. */
function parseKeyFile(key: RawValue, file: RawValue, cwd: string): string | null {
  if (file.value === undefined) return null;
  if (key.value !== undefined) throw new ConfigError(file.variable, "RUNNEL_MASTER_KEY is set too; set one of the two.");
  return resolveDir(file.value, cwd);
}

function parseAbsoluteFolder(raw: RawValue, what: string): string | null {
  if (raw.value === undefined) return null;
  if (!isAbsolute(raw.value)) throw new ConfigError(raw.variable, `expected an absolute folder path for ${what}, got "${raw.value}". Set it to e.g. /tmp/runner-profiles, or unset it.`);
  return resolve(raw.value);
}

const OAUTH_CLIENT_ID = /^RUNNEL_OAUTH_([A-Z0-9_]+)_CLIENT_ID$/;

/** Every RUNNEL_OAUTH_<SLUG>_CLIENT_ID with its _CLIENT_SECRET, keyed by <SLUG>; one without the other stops the start. */
function parseOAuthClients(env: Env, raw: (variable: string) => RawValue): RunnelConfig["oauthClients"] {
  const clients: Record<string, { clientId: string; clientSecret: string }> = {};
  const prefixes = new Set<string>();
  for (const name of Object.keys(env)) {
    const id = OAUTH_CLIENT_ID.exec(name);
    if (id) prefixes.add(id[1]!);
    const secret = /^RUNNEL_OAUTH_([A-Z0-9_]+)_CLIENT_SECRET$/.exec(name);
    if (secret) prefixes.add(secret[1]!);
  }
  for (const slug of prefixes) {
    const clientId = raw(`RUNNEL_OAUTH_${slug}_CLIENT_ID`).value;
    const clientSecret = raw(`RUNNEL_OAUTH_${slug}_CLIENT_SECRET`).value;
    if (clientId === undefined && clientSecret === undefined) continue;
    if (clientId === undefined || clientSecret === undefined) {
      const missing = clientId === undefined ? `RUNNEL_OAUTH_${slug}_CLIENT_ID` : `RUNNEL_OAUTH_${slug}_CLIENT_SECRET`;
      throw new ConfigError(missing, `is not set, but its pair is: set both the client id and the client secret of the ${slug.toLowerCase()} OAuth app, or neither.`);
    }
    clients[slug] = Object.freeze({ clientId, clientSecret });
  }
  return Object.freeze(clients);
}
