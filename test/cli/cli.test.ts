import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/child.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { freePort } from "../helpers/ports.js";

describe("the runnel CLI against a real server", () => {
  let server: TestServer;
  let configHome: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer();
    configHome = await mkdtemp(join(tmpdir(), "runnel-cli-"));
    env = { XDG_CONFIG_HOME: configHome, HOME: configHome };
  });
  afterAll(async () => {
    await server.close();
    await rm(configHome, { recursive: true, force: true });
  });

  it("logs in with the answers typed at its prompts, then knows who you are", async () => {
    const login = await runCli(["login"], { env, input: `${server.url}\n${server.adminKey}\n` });
    expect(login.stderr).toContain("Runnel server address");
    expect(login.stderr).toContain("API key");
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${server.url} as admin`);

    const configFile = join(configHome, "runnel", "config");
    const text = await readFile(configFile, "utf8");
    expect(text).toContain("[default]");
    expect(text).toContain(`api_key=${server.adminKey}`);
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);

    const whoami = await runCli(["whoami"], { env });
    expect(whoami.code).toBe(0);
    expect(whoami.stdout).toMatch(/^admin \(u_[0-9a-z]{26}\), admin$/m);
    expect(whoami.stdout).toContain(`server:  ${server.url}`);

    const json = await runCli(["whoami", "--json"], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ username: "admin", is_admin: true, server_url: server.url, profile: "default" });
  });

  it("keeps profiles apart, and logout forgets only its own", async () => {
    const user = await runCli(["users", "create", "erin", "--email", "erin@example.com", "--json"], { env });
    expect(user.code).toBe(0);
    const erinKey: string = JSON.parse(user.stdout).api_key.key;

    const login = await runCli(["login", "-p", "erin", "--server", server.url], { env, input: `${erinKey}\n` });
    expect(login.code).toBe(0);
    expect(JSON.parse((await runCli(["-p", "erin", "whoami", "--json"], { env })).stdout)).toMatchObject({ username: "erin", email: "erin@example.com" });
    expect(JSON.parse((await runCli(["whoami", "--json"], { env })).stdout).username).toBe("admin");

    const logout = await runCli(["logout", "-p", "erin"], { env });
    expect(logout.code).toBe(0);
    const after = await runCli(["whoami", "-p", "erin"], { env });
    expect(after.code).toBe(1);
    expect(after.stderr).toContain("runnel login -p erin");
    expect((await runCli(["whoami"], { env })).code).toBe(0);
  });

  it("refuses a wrong key at login and keeps the saved profile", async () => {
    const before = await readFile(join(configHome, "runnel", "config"), "utf8");
    const login = await runCli(["login", "--server", server.url, "--api-key", `rnl_${"B".repeat(43)}`], { env });
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/Error \(Unauthorized\): The API key is not valid/);
    expect(await readFile(join(configHome, "runnel", "config"), "utf8")).toBe(before);
  });

  it("says clearly when the server cannot be reached", async () => {
    const port = await freePort();
    const login = await runCli(["login", "--server", `http://127.0.0.1:${port}`, "--api-key", server.adminKey], { env });
    expect(login.code).toBe(1);
    expect(login.stderr).toContain(`Could not reach the Runnel server at http://127.0.0.1:${port} (ECONNREFUSED)`);
  });

  it("creates, lists and revokes keys", async () => {
    const created = await runCli(["keys", "create", "--name", "ci", "--json"], { env });
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({ name: "ci", key: expect.stringMatching(/^rnl_/) });

    const list = await runCli(["keys", "list"], { env });
    expect(list.stdout).toContain(key.id);
    expect(list.stdout).toContain(`${key.prefix}…`);

    const revoke = await runCli(["keys", "revoke", key.id], { env });
    expect(revoke.code).toBe(0);
    const listed = JSON.parse((await runCli(["keys", "list", "--json"], { env })).stdout);
    expect(listed.data.find((item: { id: string }) => item.id === key.id).revoked_at).toEqual(expect.any(Number));

    const again = await runCli(["keys", "revoke", "ak_nosuchkey"], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("NotFound");
  });

  it("takes the server and key from the environment too", async () => {
    const whoami = await runCli(["whoami", "--json"], { env: { HOME: "/nonexistent", RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: server.adminKey } });
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout).username).toBe("admin");
  });

  it("sends a saved profile's key to RUNNEL_SERVER_URL when that is set alone", async () => {
    const home = await mkdtemp(join(tmpdir(), "runnel-cli-url-"));
    try {
      const own = { XDG_CONFIG_HOME: home, HOME: home };
      // A profile saved for an address where nothing listens: RUNNEL_SERVER_URL points at the server instead.
      const nowhere = `http://127.0.0.1:${await freePort()}`;
      const login = await runCli(["login", "--server", server.url], { env: own, input: `${server.adminKey}\n` });
      expect(login.code, login.stderr).toBe(0);
      const config = join(home, "runnel", "config");
      await writeFile(config, (await readFile(config, "utf8")).replace(server.url, nowhere));
      const unreachable = await runCli(["whoami"], { env: own });
      expect(unreachable.code).toBe(1);
      const whoami = await runCli(["whoami", "--json"], { env: { ...own, RUNNEL_SERVER_URL: server.url } });
      expect(whoami.code, whoami.stderr).toBe(0);
      expect(JSON.parse(whoami.stdout)).toMatchObject({ username: "admin", server_url: server.url, profile: "default" });
      // With no saved profile it says what to set.
      const none = await runCli(["whoami"], { env: { ...own, RUNNEL_SERVER_URL: server.url, XDG_CONFIG_HOME: join(home, "empty") } });
      expect(none.code).toBe(1);
      expect(none.stderr).toContain("You are not logged in. Run `runnel login` first, or set RUNNEL_API_KEY with RUNNEL_SERVER_URL.");
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("has --help on every command", async () => {
    for (const args of [["--help"], ["server", "--help"], ["login", "--help"], ["logout", "--help"], ["whoami", "--help"], ["keys", "list", "--help"], ["users", "create", "--help"]]) {
      const help = await runCli(args, { env });
      expect(help.code, args.join(" ")).toBe(0);
      expect(help.stdout, args.join(" ")).toMatch(/^Usage: runnel/);
    }
  });
});
