import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runCliInProcess } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

/** `runnel env set|list|unset` against a real server: the commands in this process, after a login by the real binary. */
describe("runnel env", () => {
  let server: TestServer;
  let configHome: string;
  let env: Record<string, string>;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer();
    configHome = await mkdtemp(join(tmpdir(), "runnel-cli-env-"));
    env = { XDG_CONFIG_HOME: configHome, HOME: configHome };
    key = (await createUser(server, "envy")).key;
    const login = await runCli(["login"], { env, input: `${server.url}\n${key}\n` });
    if (login.code !== 0) throw new Error(login.stderr);
  });
  afterAll(async () => {
    await server.close();
    await rm(configHome, { recursive: true, force: true });
  });

  it("sets a variable from the command line and a secret one from stdin, lists them, and never shows the secret", async () => {
    const plain = await runCliInProcess(["env", "set", "REGION", "eu-west-1"], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe("Set REGION. Steps read it as {{process.env.REGION}}.\n");

    const secret = await runCliInProcess(["env", "set", "API_TOKEN", "--secret"], { env, input: "cli-secret-81f2\n" });
    expect(secret.code, secret.stderr).toBe(0);
    expect(secret.stdout).toBe("Set API_TOKEN (secret: its value is not shown again). Steps read it as {{process.env.API_TOKEN}}.\n");

    const listed = await runCliInProcess(["env", "list"], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/API_TOKEN\s*│\s*\(secret\)/);
    expect(listed.stdout).toMatch(/REGION\s*│\s*eu-west-1/);
    expect(listed.stdout).not.toContain("cli-secret-81f2");
    const json = JSON.parse((await runCliInProcess(["env", "list", "--json"], { env })).stdout);
    expect(json.data).toMatchObject([{ name: "API_TOKEN", value: null, secret: true }, { name: "REGION", value: "eu-west-1", secret: false }]);

    expect(JSON.stringify((await call(server.url, "GET", "/v1/env", { key })).body)).not.toContain("cli-secret-81f2");

    // A value read from stdin is the whole of it, without the final newline.
    expect((await runCliInProcess(["env", "set", "PIPED"], { env, input: "two words\n" })).code).toBe(0);
    const piped = (await call(server.url, "GET", "/v1/env", { key })).body.data.find((envVar: { name: string }) => envVar.name === "PIPED");
    expect(piped.value).toBe("two words");
    expect((await runCliInProcess(["env", "unset", "PIPED"], { env })).code).toBe(0);
  });

  it("unsets a variable, and says so when there is none", async () => {
    const removed = await runCliInProcess(["env", "unset", "REGION"], { env });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe("Removed REGION.\n");
    const again = await runCliInProcess(["env", "unset", "REGION"], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("You have no environment variable REGION");
    expect(JSON.parse((await runCliInProcess(["env", "list", "--json"], { env })).stdout).data.map((envVar: { name: string }) => envVar.name)).toEqual(["API_TOKEN"]);
  });

  it("refuses a name that is not an environment variable's, saying what one is", async () => {
    const refused = await runCliInProcess(["env", "set", "9LIVES", "x"], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('"9LIVES" is not a valid environment variable name: use letters, digits and _, not starting with a digit');
  });
});
