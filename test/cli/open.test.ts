import { spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, succeeded } from "../helpers/child.js";
import { eventually } from "../helpers/sources.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

/** The one-time token in a sign-in link's fragment. */
function tokenOf(url: string): string {
  return new URL(url).hash.slice("#token=".length);
}

describe("runnel open: a one-time sign-in link to the web console", () => {
  let server: TestServer;
  let folder: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    // The CLI runs from dist/.
    const build = spawnSync(process.execPath, ["scripts/build.mjs"], { encoding: "utf8" });
    if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`);
    server = await startTestServer();
    folder = await mkdtemp(join(tmpdir(), "runnel-open-"));
    env = { HOME: folder, XDG_CONFIG_HOME: folder, RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: server.adminKey, PATH: "/nonexistent" };
  }, 240_000);
  afterAll(async () => {
    await server.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("prints the link and hands it to the desktop's opener (xdg-open); the link signs in once", async () => {
    const bin = join(folder, "bin");
    const opened = join(folder, "opened.txt");
    await mkdir(bin);
    // A stand-in for xdg-open that records what it was asked to open.
    await writeFile(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    await chmod(join(bin, "xdg-open"), 0o755);

    const result = succeeded(await runCli(["open"], { env: { ...env, PATH: `${bin}:/usr/bin:/bin` } }));
    const url = result.stdout.trim();
    expect(url).toMatch(new RegExp(`^${server.url.replace(/[.:/]/g, "\\$&")}/sign-in#token=[A-Za-z0-9_-]{43}$`));
    expect(result.stderr).toContain("Opened the link in your browser");
    const handed = await eventually(async () => (await readFile(opened, "utf8").catch(() => "")) || undefined, 5_000, "xdg-open to be called");
    expect(handed).toBe(url);

    const first = await call(server.url, "POST", "/v1/sessions", { json: { sign_in_token: tokenOf(url) } });
    expect(first.status).toBe(201);
    expect(first.body.data.user.username).toBe("admin");
    const second = await call(server.url, "POST", "/v1/sessions", { json: { sign_in_token: tokenOf(url) } });
    expect(second.status).toBe(401);
  });

  it("only prints the link where there is no opener, or with --no-browser, and still succeeds", async () => {
    const none = succeeded(await runCli(["open"], { env }));
    expect(none.stdout.trim()).toMatch(/\/sign-in#token=/);
    expect(none.stderr).toContain("Open the link in a browser");

    const json = succeeded(await runCli(["open", "--no-browser", "--json"], { env }));
    const link = JSON.parse(json.stdout);
    expect(link.url).toMatch(/\/sign-in#token=/);
    expect(Date.parse(link.expires_at) - Date.now()).toBeLessThanOrEqual(60_000);
    // Each run makes its own link.
    expect(tokenOf(link.url)).not.toBe(tokenOf(none.stdout.trim()));
  });

  it("tells a user who is not logged in what to do", async () => {
    const result = await runCli(["open"], { env: { HOME: folder, XDG_CONFIG_HOME: join(folder, "empty"), PATH: "/nonexistent" } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("runnel login");
  });
});
