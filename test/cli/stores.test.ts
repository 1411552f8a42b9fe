import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, type CliResult, succeeded } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

/** `runnel stores list|get|set|delete` against a real server, as two users. */
describe("runnel stores", () => {
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;
  let otherEnv: Record<string, string>;
  let key: string;
  // In this process: what the commands do (the binary itself is run in cli.test.ts).
  const cli = (...args: string[]): Promise<CliResult> => runCliInProcess(args, { env, cwd: dir });
  const ok = succeeded;

  beforeAll(async () => {
    server = await startTestServer();
    dir = await mkdtemp(join(tmpdir(), "runnel-cli-stores-"));
    key = (await createUser(server, "stella")).key;
    const otherKey = (await createUser(server, "otto")).key;
    env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: dir, XDG_CONFIG_HOME: dir };
    otherEnv = { ...env, RUNNEL_API_KEY: otherKey };
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("sets, lists, reads and deletes records and stores, and keeps them from another user", async () => {
    expect(ok(await cli("stores", "list")).stderr).toContain("No data stores yet");
    expect(ok(await cli("stores", "set", "cache", "config", '{"retries":3}')).stdout).toBe("Set config in cache.\n");
    expect(ok(await cli("stores", "set", "cache", "greeting", "hello there")).stdout).toBe("Set greeting in cache.\n");
    expect(ok(await cli("stores", "set", "cache", "soon", "42", "--ttl", "3600")).stdout).toMatch(/^Set soon in cache, expires \d{4}-\d\d-\d\dT/);

    const listed = ok(await cli("stores", "list"));
    expect(listed.stdout).toMatch(/cache\s+│?\s*3\b/);
    const records = JSON.parse(ok(await cli("stores", "get", "cache", "--json")).stdout);
    expect(records.data.map((record: any) => [record.key, record.value])).toEqual([["config", { retries: 3 }], ["greeting", "hello there"], ["soon", 42]]);
    expect(JSON.parse(ok(await cli("stores", "get", "cache", "config")).stdout)).toEqual({ retries: 3 });
    // What the CLI wrote is what the API serves.
    expect((await call(server.url, "GET", "/v1/data_stores/cache/records/greeting", { key })).body.data.value).toBe("hello there");

    // Another user sees nothing of it.
    const stranger = await runCliInProcess(["stores", "get", "cache", "config"], { env: otherEnv, cwd: dir });
    expect(stranger.code).not.toBe(0);
    expect(stranger.stderr).toMatch(/No record in data store "cache"/);
    expect(JSON.parse((await runCliInProcess(["stores", "list", "--json"], { env: otherEnv, cwd: dir })).stdout).data).toEqual([]);

    expect(ok(await cli("stores", "delete", "cache", "greeting")).stdout).toBe("Deleted greeting from cache.\n");
    const missing = await cli("stores", "get", "cache", "greeting");
    expect(missing.code).not.toBe(0);
    expect(ok(await cli("stores", "delete", "cache")).stdout).toBe("Deleted the data store cache and its records.\n");
    expect(JSON.parse(ok(await cli("stores", "list", "--json")).stdout).data).toEqual([]);
    const gone = await cli("stores", "delete", "cache");
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/No data store/);
  });
});
