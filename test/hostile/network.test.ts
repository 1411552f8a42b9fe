import { createServer as createTcpServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { startNamespaceHost, type NamespaceHost } from "../helpers/netns.js";
import { deploySource, eventually } from "../helpers/sources.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";
import { expectBystanderServed, startHostileHarness, type HostileHarness } from "./harness.js";

/**
 * Hostile network use, through a real server: an attacker's component aims
 * at the server's own services (its API port, PostgreSQL, Redis, a fake
 * database on loopback, the cloud metadata address, private networks,
 * redirects into them) while another user's source keeps being answered.
 * The "internet" and the private network are test hosts in a network
 * namespace this test makes (test/helpers/netns.ts); nothing leaves the
 * machine.
 */

const PROBE_SOURCE = `
  const net = require("node:net");
  const tcp = (host, port, say) => new Promise((resolve) => {
    const socket = net.connect(port, host);
    let answer = "";
    socket.setTimeout(5000, () => socket.destroy(new Error("timeout")));
    socket.on("connect", () => socket.write(say));
    socket.on("data", (data) => { answer += data; socket.destroy(); resolve("answered: " + answer.slice(0, 200)); });
    socket.on("error", (error) => resolve(error.code + ": " + error.message));
    socket.on("close", () => resolve("closed: " + answer));
  });
  const get = (url) => fetch(url).then((r) => r.text().then((t) => "answered: " + t.slice(0, 200)), (e) => "refused: " + (e.cause ? e.cause.message : e.message));
  module.exports = {
    name: "network probe",
    version: "0.1.0",
    props: { http: { type: "$.interface.http", customResponse: true } },
    async run(event) {
      const t = event.body;
      const out = {
        api: await get(t.api + "/healthz"),
        postgres: await tcp("127.0.0.1", 5432, "\\u0000\\u0000\\u0000\\u0008\\u0004\\u00d2\\u0016\\u002f"),
        redis: await tcp("127.0.0.1", 6379, "PING\\r\\n"),
        fakeDatabase: await tcp("localhost", t.fakePort, "hello"),
        metadata: await get("http://169.254.169.254/latest/meta-data/"),
        publicHost: await get("http://" + t.publicHost + "/hello"),
        privateHost: await get("http://" + t.privateHost + "/hello"),
        redirectInward: await get("http://" + t.publicHost + "/redirect?to=" + encodeURIComponent(t.api + "/healthz")),
      };
      this.http.respond({ status: 200, headers: { "content-type": "application/json" }, body: out });
    },
  };
`;


let host: NamespaceHost;
let fakeDatabase: Server;
let fakeDatabaseHits = 0;
beforeAll(async () => {
  host = await startNamespaceHost();
  fakeDatabase = createTcpServer((socket) => {
    fakeDatabaseHits += 1;
    socket.end("fake database banner");
  });
  await new Promise<void>((resolve) => fakeDatabase.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  fakeDatabase?.close();
  await host?.close();
});

describe("the default policy, through a real server", () => {
  let h: HostileHarness;
  let server: TestServer;
  let attacker: { key: string };

  beforeAll(async () => {
    h = await startHostileHarness();
    ({ server, attacker } = h);
  });
  afterAll(() => h?.close());

  it("keeps an attacker's component off the server's own services while the public internet and another user's source work", async () => {
    const probe = await h.deploySource(PROBE_SOURCE);
    const targets = {
      api: server.url,
      fakePort: (fakeDatabase.address() as AddressInfo).port,
      publicHost: `${host.publicAddress}:${host.port}`,
      privateHost: `${host.privateAddress}:${host.port}`,
    };
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(probe, { json: targets }));
    const out = outcome.body as Record<string, string>;

    const refused = (what: string) => new RegExp(`refused by Runnel's network policy: ${what}`);
    expect(out.api).toMatch(refused("127\\.0\\.0\\.1 is loopback"));
    expect(out.postgres).toMatch(/^EACCES: .*127\.0\.0\.1 is loopback/);
    expect(out.redis).toMatch(/^EACCES: .*127\.0\.0\.1 is loopback/);
    expect(out.fakeDatabase).toMatch(/^EACCES: Connection to localhost:\d+ refused .*127\.0\.0\.1 is loopback/);
    expect(out.metadata).toMatch(refused("169\\.254\\.169\\.254 is link-local, where cloud metadata services live"));
    expect(out.privateHost).toMatch(refused("10\\.213\\.\\d+\\.2 is a private network"));
    expect(out.publicHost).toBe("answered: hello from the test host");
    // The public host answered the redirect, and the hop into the server was refused.
    expect(out.redirectInward).toMatch(refused("127\\.0\\.0\\.1 is loopback"));
    expect(fakeDatabaseHits).toBe(0);
    expect(await host.received()).toEqual(expect.arrayContaining(["GET /hello", expect.stringMatching(/^GET \/redirect\?to=/)]));

    expectBystanderServed(bystander);
  });

  it("applies the same rule to $.send.http: a send into the server's network fails in the workflow's logs, one to the internet goes", async () => {
    const workflow = await createWorkflow(server, attacker.key, {
      name: "Sends inward",
      trigger: { type: "http" },
      steps: [
        {
          name: "send",
          code: `export default defineComponent({ async run({ $ }) {
            $.send.http({ method: "POST", url: ${JSON.stringify(`${server.url}/v1/users`)}, data: { username: "pwned" } });
            $.send.http({ method: "GET", url: "http://169.254.169.254/latest/meta-data/" });
            $.send.http({ method: "POST", url: ${JSON.stringify(`http://${host.publicAddress}:${host.port}/redirect?to=${encodeURIComponent(`${server.url}/healthz`)}`)} });
            $.send.http({ method: "POST", url: ${JSON.stringify(`http://${host.publicAddress}:${host.port}/sent`)}, data: { ok: true } });
          } })`,
        },
      ],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST" });
    await waitFor(() => runsOf(server, attacker.key, workflow.id), (runs) => runs.length === 1, "the run");
    const logs = await waitFor(
      () => call(server.url, "GET", `/v1/workflows/${workflow.id}/logs?limit=100`, { key: attacker.key }),
      (response) => response.body.data.length >= 4,
      "the four sends' log lines",
    );
    const lines: string[] = logs.body.data.map((log: { text: string }) => log.text);
    // The API itself, and the redirect's hop back into it.
    expect(lines.filter((line) => /failed: Connection to 127\.0\.0\.1:\d+ refused by Runnel's network policy: 127\.0\.0\.1 is loopback/.test(line))).toHaveLength(2);
    expect(lines).toContainEqual(expect.stringMatching(/failed: Connection to 169\.254\.169\.254 refused by Runnel's network policy/));
    expect(lines).toContainEqual(expect.stringContaining(`POST http://${host.publicAddress}:${host.port}/sent answered 200`));
    expect(await host.received()).toContain("POST /sent");
    const users = await call(server.url, "GET", "/v1/users/me", { key: server.adminKey });
    expect(users.status).toBe(200);
  });

  it("says in /healthz that the policy is enforced", async () => {
    const health = await call(server.url, "GET", "/healthz");
    expect(health.body.sandbox).toEqual({ network: "policy", bubblewrap: true, permission_model: true, memory: "cgroup-v1" });
  });
});

describe("RUNNEL_EGRESS_ALLOW", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ RUNNEL_EGRESS_ALLOW: `${host.privateAddress}/32` });
  });
  afterAll(() => server?.close());

  it("opens the private host it names, and nothing else", async () => {
    const user = await createUser(server, "ops");
    const probe = await deploySource(server, user.key, { component_code: PROBE_SOURCE });
    const targets = { api: server.url, fakePort: (fakeDatabase.address() as AddressInfo).port, publicHost: `${host.publicAddress}:${host.port}`, privateHost: `${host.privateAddress}:${host.port}` };
    const out = (await (await fetch(probe.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(targets) })).json()) as Record<string, string>;
    expect(out.privateHost).toBe("answered: hello from the test host");
    expect(out.api).toMatch(/127\.0\.0\.1 is loopback/);
    expect(out.metadata).toMatch(/169\.254\.169\.254 is link-local/);
  });
});

describe("a server that cannot enforce the policy", () => {
  it("says so in /healthz and serves one user only, unless the admin accepts the risk", async () => {
    const server = await startTestServer({ RUNNEL_SANDBOX_BUBBLEWRAP: "off" });
    try {
      expect((await call(server.url, "GET", "/healthz")).body.sandbox).toMatchObject({ network: "unenforced", bubblewrap: false });
      const refused = await call(server.url, "POST", "/v1/users", { key: server.adminKey, json: { username: "second" } });
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toContain("serves one user only");
      expect(refused.body.error.message).toContain("RUNNEL_SANDBOX_NETWORK=unrestricted");
    } finally {
      await server.close();
    }
    const open = await startTestServer({ RUNNEL_SANDBOX_BUBBLEWRAP: "off", RUNNEL_SANDBOX_NETWORK: "unrestricted" });
    try {
      expect((await call(open.url, "GET", "/healthz")).body.sandbox).toMatchObject({ network: "unrestricted" });
      await eventually(async () => ((await call(open.url, "POST", "/v1/users", { key: open.adminKey, json: { username: "second" } })).status === 201 ? true : undefined), 5_000, "the second user");
    } finally {
      await open.close();
    }
  });

  it("refuses to start when it already has several users", async () => {
    const first = await startTestServer({}, { keepData: true });
    await createUser(first, "second");
    await first.close();
    await expect(startTestServer({ RUNNEL_SANDBOX_BUBBLEWRAP: "off" }, { dataDir: first.dataDir })).rejects.toThrow(/serves one user only.*It has 2 users\./);
  });
});
