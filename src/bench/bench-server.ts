import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { loadConfig } from "../config/config.js";
import { createLogger } from "../server/logger.js";
import { startServer, type RunningServer } from "../server/start-server.js";

export const POSTGRES_URL = process.env.RUNNEL_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface BenchServer {
  server: RunningServer;
  key: string;
  close(): Promise<void>;
}

export interface BenchServerOptions {
  /** More settings, as environment variables. */
  env?: Record<string, string>;
  /** An existing data folder (kept on close), to start again over the same store and package cache. */
  dataDir?: string;
}

/** A real Runnel server on a free loopback port, on SQLite or on a fresh PostgreSQL schema. */
export async function startBenchServer(store: "sqlite" | "postgres", options: BenchServerOptions = {}): Promise<BenchServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "runnel-bench-")));
  const schema = `runnel_bench_${randomBytes(4).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  let databaseUrl: string | undefined;
  if (store === "postgres") {
    await admin(`CREATE SCHEMA ${schema}`);
    databaseUrl = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  }
  const config = loadConfig(
    // The runners' profiling mode passes through (src/bench/runner/ab-bench.ts profiles with it).
    { RUNNEL_LOG_LEVEL: "silent", RUNNEL_RATE_LIMIT_PER_MINUTE: "0", RUNNEL_RUNNER_CPU_PROF: process.env.RUNNEL_RUNNER_CPU_PROF, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...options.env },
    { dataDir, port: "0", host: "127.0.0.1" },
    { cwd: dataDir, stdoutIsTty: false },
  );
  const server = await startServer({ config, logger: createLogger({ level: (process.env.RUNNEL_BENCH_LOG_LEVEL ?? "silent") as "silent", format: "json" }), announce: () => undefined });
  const key = (await readFile(join(dataDir, "admin-api-key"), "utf8")).trim();
  return {
    server,
    key,
    async close() {
      await server.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
      if (store === "postgres") await admin(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}
