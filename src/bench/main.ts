import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { loadConfig } from "../config/config.js";
import { createLogger } from "../server/logger.js";
import { startServer } from "../server/start-server.js";
import { runLoad, type LoadResult } from "./http-load.js";

/**
 * `npm run bench`: prints one table of the figures the issues ask for.
 * Each row says what was measured; run it on an otherwise idle machine.
 */
const POSTGRES_URL = process.env.RUNNEL_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REQUESTS = Number(process.env.RUNNEL_BENCH_REQUESTS ?? 5_000);

interface Row {
  benchmark: string;
  store: string;
  result: LoadResult;
}

async function benchServer(store: "sqlite" | "postgres"): Promise<Row[]> {
  const dataDir = await mkdtemp(join(tmpdir(), "runnel-bench-"));
  const schema = `runnel_bench_${randomBytes(4).toString("hex")}`;
  let databaseUrl: string | undefined;
  if (store === "postgres") {
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    databaseUrl = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  }
  const config = loadConfig(
    { RUNNEL_LOG_LEVEL: "silent", RUNNEL_RATE_LIMIT_PER_MINUTE: "0", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    { dataDir, port: "0", host: "127.0.0.1" },
    { cwd: dataDir, stdoutIsTty: false },
  );
  const server = await startServer({ config, logger: createLogger({ level: "silent", format: "json" }), announce: () => undefined });
  const key = (await readFile(join(dataDir, "admin-api-key"), "utf8")).trim();
  const headers = { authorization: `Bearer ${key}` };
  const me = () => fetch(`${server.url}/v1/users/me`, { headers });
  const createKey = () =>
    fetch(`${server.url}/v1/users/me/api_keys`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{}" });
  try {
    await runLoad(me, 500, 8); // warm-up
    return [
      { benchmark: "GET /v1/users/me, 1 in flight", store, result: await runLoad(me, REQUESTS / 5, 1) },
      { benchmark: "GET /v1/users/me, 32 in flight", store, result: await runLoad(me, REQUESTS, 32) },
      { benchmark: "POST /v1/users/me/api_keys (a write), 8 in flight", store, result: await runLoad(createKey, REQUESTS / 5, 8) },
    ];
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
    if (store === "postgres") {
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  }
}

async function benchCliStart(): Promise<Row> {
  const bin = fileURLToPath(new URL("../../bin/runnel.js", import.meta.url));
  const run = promisify(execFile);
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const begin = performance.now();
    await run(process.execPath, [bin, "--version"]);
    times.push(performance.now() - begin);
  }
  times.sort((a, b) => a - b);
  const total = times.reduce((sum, t) => sum + t, 0) / 1000;
  return {
    benchmark: "runnel --version (CLI start, child process)",
    store: "-",
    result: { requests: times.length, seconds: total, perSecond: times.length / total, p50Ms: times[5]!, p99Ms: times[9]!, failures: 0 },
  };
}

function printTable(rows: Row[]): void {
  const head = ["benchmark", "store", "requests", "req/s", "p50 ms", "p99 ms", "failed"];
  const body = rows.map((row) => [
    row.benchmark,
    row.store,
    String(row.result.requests),
    row.result.perSecond.toFixed(0),
    row.result.p50Ms.toFixed(2),
    row.result.p99Ms.toFixed(2),
    String(row.result.failures),
  ]);
  const widths = head.map((title, i) => Math.max(title.length, ...body.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(" | ")} |`;
  console.log(line(head));
  console.log(`|${widths.map((w, i) => (i < 2 ? `${"-".repeat(w + 1)}-` : `-${"-".repeat(w)}:`)).join("|")}|`);
  for (const cells of body) console.log(line(cells));
}

const rows = [...(await benchServer("sqlite")), ...(await benchServer("postgres")), await benchCliStart()];
printTable(rows);
