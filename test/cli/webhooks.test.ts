import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, type CliResult, succeeded } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { waitFor } from "../workflows/helpers.js";

/** An HTTP source that emits each request's body. */
const ECHO = `export default { name: "Echo", version: "0.0.1", props: { http: "$.interface.http" }, async run(event) { this.$emit(event.body); } }`;

describe("runnel webhooks against a real server", () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let dir: string;
  let env: Record<string, string>;
  let otherEnv: Record<string, string>;
  let key: string;
  // In this process: what the commands do (the binary itself is run in cli.test.ts).
  const cli = (...args: string[]): Promise<CliResult> => runCliInProcess(args, { env, cwd: dir });
  const ok = succeeded;
  const json = (result: CliResult) => JSON.parse(ok(result).stdout);

  beforeAll(async () => {
    // The receiver lives on loopback: allowed here, as an admin allows an internal host.
    receiver = await startWebhookReceiver();
    server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
    dir = await mkdtemp(join(tmpdir(), "runnel-cli-webhooks-"));
    key = (await createUser(server, "wendy")).key;
    env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: dir, XDG_CONFIG_HOME: dir };
    otherEnv = { ...env, RUNNEL_API_KEY: (await createUser(server, "oliver")).key };
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("creates a webhook (the secret shown once), lists it, shows its deliveries, and deletes it", async () => {
    const empty = ok(await cli("webhooks", "list"));
    expect(empty.stdout).toBe("");
    expect(empty.stderr).toContain("runnel webhooks create <url>");

    const created = ok(await cli("webhooks", "create", receiver.url, "--name", "orders", "--description", "the order receiver"));
    const id = new RegExp(`^Created webhook (wh_[0-9a-z]+) \\("orders"\\) for ${receiver.url.replace(/[./]/g, "\\$&")}$`, "m").exec(created.stdout)?.[1];
    expect(id, created.stdout).toBeDefined();
    const secret = /^Signing secret: (whsec_\S+)$/m.exec(created.stdout)?.[1];
    expect(secret, created.stdout).toBeDefined();
    expect(created.stderr).toContain("it is not shown again");
    expect(created.stderr).toContain(`runnel subscribe --emitter <source or workflow> --listener ${id}`);

    const second = json(await cli("webhooks", "create", receiver.url, "--json"));
    expect(second).toMatchObject({ id: expect.stringMatching(/^wh_/), name: null, description: null, url: receiver.url, active: true, signing_secret: expect.stringMatching(/^whsec_/) });

    const table = ok(await cli("webhooks", "list")).stdout;
    expect(table).toMatch(new RegExp(`${id}\\s*│\\s*orders\\s*│\\s*${receiver.url.replace(/[./]/g, "\\$&")}\\s*│\\s*yes`));
    expect(table).toContain(second.id);
    const listed = json(await cli("webhooks", "list", "--json"));
    expect(listed.data.map((webhook: { id: string }) => webhook.id)).toEqual([second.id, id]);
    expect(listed.page_info.total_count).toBe(2);
    // The secret is shown at creation only.
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(table).not.toContain(secret);

    // Nothing sent yet: the deliveries say how to send something.
    const none = ok(await cli("webhooks", "deliveries", id!));
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain(`runnel subscribe --emitter <source or workflow> --listener ${id}`);

    // Subscribed with the CLI (a wh_ listener is sent as given), a source's event is POSTed and signed with the secret shown.
    const source = await deploySource(server, key, { component_code: ECHO, name: "echo" });
    const subscribed = json(await cli("subscribe", "--emitter", "echo", "--listener", id!, "--json"));
    expect(subscribed).toMatchObject({ emitter_id: source.id, listener_id: id, event_name: "" });
    const sent = await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"order":7}' });
    expect(sent.status).toBe(200);
    const deliveries = await waitFor(
      async () => json(await cli("webhooks", "deliveries", id!, "--json")).data,
      (list: any[]) => list.length === 1 && list[0].status === "delivered",
      "the webhook's delivery",
    );
    expect(deliveries[0]).toMatchObject({ webhook_id: id, emitter_id: source.id, status: "delivered", attempts: 1, last_status: 200, last_error: null });
    const request = receiver.received.find((received) => received.headers["x-runnel-webhook-id"] === id)!;
    expect(JSON.parse(request.body)).toEqual({ order: 7 });
    const expected = Buffer.from(`sha256=${createHmac("sha256", secret!).update(request.body).digest("hex")}`);
    const given = Buffer.from(String(request.headers["x-runnel-signature"]));
    expect(given.length === expected.length && timingSafeEqual(given, expected)).toBe(true);
    const shown = ok(await cli("webhooks", "deliveries", id!)).stdout;
    expect(shown).toMatch(new RegExp(`${deliveries[0].event_id}\\s*│\\s*${source.id}\\s*│\\s*\\(default\\)\\s*│\\s*delivered\\s*│\\s*1\\s*│\\s*HTTP 200`));

    // Another user sees none of it.
    const other = (...args: string[]) => runCliInProcess(args, { env: otherEnv, cwd: dir });
    for (const args of [["webhooks", "deliveries", id!], ["webhooks", "delete", id!]]) {
      const refused = await other(...args);
      expect(refused.code, args.join(" ")).toBe(1);
      expect(refused.stderr, args.join(" ")).toContain("Error (NotFound)");
    }
    expect(JSON.parse((await other("webhooks", "list", "--json")).stdout).data).toEqual([]);

    expect(ok(await cli("webhooks", "delete", id!)).stdout).toBe(`Deleted webhook ${id}.\n`);
    expect(json(await cli("webhooks", "delete", second.id, "--json"))).toEqual({ id: second.id, deleted: true });
    const gone = await cli("webhooks", "deliveries", id!);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("Error (NotFound)");
    // Its subscription went with it.
    expect((await call(server.url, "GET", "/v1/users/me/subscriptions", { key })).body.data.filter((subscription: any) => subscription.listener_id === id)).toEqual([]);
  });

  it("names the setting to change when a URL is on the server's own networks, and exits 1", async () => {
    const refused = await cli("webhooks", "create", "http://10.0.0.5/hook");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Error (ValidationError)");
    expect(refused.stderr).toContain("RUNNEL_EGRESS_ALLOW");
    expect(refused.stdout).toBe("");
  });

  it("has --help on every webhooks command", async () => {
    const commands = [["webhooks"], ["webhooks", "create"], ["webhooks", "list"], ["webhooks", "delete"], ["webhooks", "deliveries"]];
    const helps = await Promise.all(commands.map((args) => cli(...args, "--help")));
    helps.forEach((help, index) => {
      expect(help.code, commands[index]!.join(" ")).toBe(0);
      expect(help.stdout, commands[index]!.join(" ")).toMatch(/^Usage: runnel webhooks/);
    });
  });
});
