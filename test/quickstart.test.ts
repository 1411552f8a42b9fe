import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCli, type RunningChild } from "./helpers/child.js";
import { freePort } from "./helpers/ports.js";
import { requirePostgres, TEST_DATABASE_URL } from "./helpers/postgres.js";

const LISTENING = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/;
const PRINTED_KEY = /^\s+(rnl_[A-Za-z0-9_-]{43})$/m;

describe("the quick start: `runnel server` in a fresh folder", () => {
  let folder: string;
  let running: RunningChild | undefined;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), "runnel-quickstart-"));
  });
  afterEach(async () => {
    if (running && running.child.exitCode === null) running.child.kill("SIGKILL");
    await rm(folder, { recursive: true, force: true });
  });

  const start = (env: Record<string, string> = {}) => {
    running = startCli(["server"], { cwd: folder, env: { RUNNEL_PORT: "0", RUNNEL_HOST: "127.0.0.1", ...env } });
    return running;
  };

  it("prints the admin key once, serves it, and stops cleanly on SIGTERM", async () => {
    const server = start();
    const [, url] = await server.waitFor(LISTENING);
    const [, key] = await server.waitFor(PRINTED_KEY);

    const me = await fetch(`${url}/v1/users/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { username: string } }).data.username).toBe("admin");

    const keyFile = join(folder, ".runnel", "admin-api-key");
    expect((await readFile(keyFile, "utf8")).trim()).toBe(key);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);

    server.child.kill("SIGTERM");
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stdout()).toContain("stopped cleanly");

    // A second start finds the admin: no new key is printed, and the first still works.
    const again = start();
    const [, url2] = await again.waitFor(LISTENING);
    expect(again.stderr()).not.toMatch(PRINTED_KEY);
    expect((await fetch(`${url2}/v1/users/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    again.child.kill("SIGINT");
    expect((await again.exited).code).toBe(0);
  });

  it("answers a health check that connected while it was still starting, as soon as it listens", async () => {
    const port = await freePort();
    const server = start({ RUNNEL_PORT: String(port) });
    // The port is bound first thing, long before the server listens (the store, the sandbox and the admin come between).
    let socket: Socket | undefined;
    while (!socket) {
      socket = await new Promise<Socket | undefined>((resolve) => {
        const attempt = connect({ host: "127.0.0.1", port }, () => resolve(attempt));
        attempt.once("error", () => resolve(undefined));
      });
      if (socket) break;
      if (server.child.exitCode !== null) throw new Error(`the server stopped before it bound its port:\n${server.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const connectedWhileStarting = !LISTENING.test(server.stdout() + server.stderr());
    socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    let text = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    await new Promise((resolve) => socket!.once("close", resolve));
    expect(connectedWhileStarting).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(text).toContain('"status":"ok"');
    server.child.kill("SIGTERM");
    expect((await server.exited).code).toBe(0);
  });

  it("finishes a request in flight before it stops", async () => {
    const server = start();
    const [, url] = await server.waitFor(LISTENING);
    const [, key] = await server.waitFor(PRINTED_KEY);

    // Send the headers and half the body, signal the server, then send the rest.
    const body = JSON.stringify({ name: "made during shutdown" });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${url}/v1/users/me/api_keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      });
      req.on("response", (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        server.child.kill("SIGTERM");
        setTimeout(() => req.end(body.slice(10)), 300);
      }, 200);
    });

    const { status, text } = await answer;
    expect(status).toBe(201);
    expect(JSON.parse(text).data.name).toBe("made during shutdown");
    expect((await server.exited).code).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it("refuses a bad setting at start-up, naming the variable", async () => {
    const server = start({ RUNNEL_PORT: "eighty" });
    const exit = await server.exited;
    expect(exit.code).toBe(1);
    expect(server.stderr()).toContain("Runnel cannot start: RUNNEL_PORT: expected a whole number from 0 to 65535");
  });

  it("says so plainly when its port is taken or its database cannot be reached", async () => {
    const first = start();
    const [, url] = await first.waitFor(LISTENING);
    const port = new URL(url!).port;
    const second = start({ RUNNEL_PORT: port, RUNNEL_DATA_DIR: join(folder, "other") });
    expect((await second.exited).code).toBe(1);
    expect(second.stderr()).toContain(`Runnel cannot start: port ${port} on 127.0.0.1 is already in use`);
    // Checked first: no admin key shown for a server that never ran, and no data folder begun.
    expect(second.stderr()).not.toContain("admin");
    await expect(stat(join(folder, "other"))).rejects.toThrow();
    first.child.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);

    const noDatabase = start({ DATABASE_URL: "postgres://nobody:secret@127.0.0.1:1/none" });
    expect((await noDatabase.exited).code).toBe(1);
    expect(noDatabase.stderr()).toContain("Runnel cannot start: cannot use the PostgreSQL database in DATABASE_URL (127.0.0.1:1/none)");
    expect(noDatabase.stderr()).not.toContain("secret");
  });

  it("runs on PostgreSQL when DATABASE_URL says so", async () => {
    await requirePostgres();
    const schema = `runnel_qs_${randomBytes(5).toString("hex")}`;
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    try {
      const databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const server = start({ DATABASE_URL: databaseUrl });
      const [, url] = await server.waitFor(LISTENING);
      const [, key] = await server.waitFor(PRINTED_KEY);
      const health = await fetch(`${url}/healthz`);
      expect(await health.json()).toMatchObject({ status: "ok", store: "postgres" });
      expect((await fetch(`${url}/v1/users/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      const rows = await admin.query(`SELECT username FROM ${schema}.users`);
      expect(rows.rows).toEqual([{ username: "admin" }]);
      server.child.kill("SIGTERM");
      expect((await server.exited).code).toBe(0);
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
