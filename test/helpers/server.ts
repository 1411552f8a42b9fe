import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/config.js";
import { createLogger } from "../../src/server/logger.js";
import { startServer, type RunningServer } from "../../src/server/start-server.js";

export interface TestServer {
  url: string;
  adminKey: string;
  dataDir: string;
  server: RunningServer;
  close(): Promise<void>;
}

/**
 * A real server on a random loopback port with its own SQLite file (or the
 * given PostgreSQL URL) in a fresh folder.
 */
export async function startTestServer(env: Record<string, string> = {}, options: { dataDir?: string; keepData?: boolean } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "runnel-test-")));
  const config = loadConfig(
    { RUNNEL_LOG_LEVEL: "silent", RUNNEL_RATE_LIMIT_PER_MINUTE: "0", ...env },
    { dataDir, port: "0", host: "127.0.0.1" },
    { cwd: dataDir, stdoutIsTty: false },
  );
  const server = await startServer({ config, logger: createLogger({ level: config.logLevel, format: "json" }), announce: () => undefined });
  const adminKey = (await readFile(join(dataDir, "admin-api-key"), "utf8")).trim();
  return {
    url: server.url,
    adminKey,
    dataDir,
    server,
    async close() {
      await server.close();
      if (!options.keepData) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface CallResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** One HTTP call with an optional Bearer key; the body is parsed when it is JSON. */
export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  options: { key?: string; json?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<CallResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  } else if (options.rawBody !== undefined) {
    headers["content-type"] ??= "application/json";
    body = options.rawBody;
  }
  const response = await fetch(`${base}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get("content-type") ?? "").includes("application/json") && text) parsed = JSON.parse(text);
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** Creates a user through the API as the admin and returns its id and key. */
export async function createUser(server: TestServer, username: string): Promise<{ id: string; key: string }> {
  const created = await call(server.url, "POST", "/v1/users", { key: server.adminKey, json: { username } });
  if (created.status !== 201) throw new Error(`creating ${username} failed: ${created.status} ${JSON.stringify(created.body)}`);
  return { id: created.body.data.id, key: created.body.data.api_key.key };
}
