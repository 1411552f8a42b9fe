import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { parsePageRequest } from "../../src/domain/paging.js";
import { Mailer, utcDay } from "../../src/engine/mail/mailer.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { runCli } from "../helpers/child.js";
import { freePort } from "../helpers/ports.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp.js";

const silent = pino({ level: "silent" });

describe("utcDay", () => {
  it.each([
    [Date.UTC(2030, 0, 2, 0, 0, 0), "2030-01-02"],
    [Date.UTC(2030, 0, 2, 23, 59, 59, 999), "2030-01-02"],
    [Date.UTC(2030, 11, 31, 23, 59, 59), "2030-12-31"],
    [0, "1970-01-01"],
  ])("%i is %s", (ms, day) => {
    expect(utcDay(ms)).toBe(day);
  });
});

describe("Mailer over a real SMTP server", () => {
  let dir: string;
  let store: Store;
  let ownerId: string;
  let sink: SmtpSink;
  const mailers: Mailer[] = [];

  const mailerFor = (smtpUrl: string | null) => {
    const mailer = new Mailer({ store, smtpUrl, from: "Runnel <runnel@example.test>", logger: silent });
    mailers.push(mailer);
    return mailer;
  };

  beforeAll(async () => {
    sink = await startSmtpSink({ rejectRecipientsEndingWith: "@nowhere.test", credentials: { user: "runnel", pass: "right-pass" } });
  });
  afterAll(() => sink.close());

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "runnel-mail-"));
    store = createSqliteStore({ file: join(dir, "runnel.sqlite") });
    await store.migrate();
    ownerId = (await store.createUser({ id: newId("user"), username: `u-${Date.now()}`, email: null, isAdmin: false, createdAt: Date.now() })).id;
    sink.received.length = 0;
  });

  afterEach(async () => {
    await Promise.all(mailers.splice(0).map((mailer) => mailer.close()));
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("delivers a mail and marks it sent", async () => {
    const mailer = mailerFor(sink.url());
    const before = Date.now();
    const workflowId = newId("workflow");
    const entry = await mailer.send({ ownerId, to: "ada@example.com", subject: "Hello from a step", text: "The body of the mail.", kind: "send-email", workflowId });

    expect(entry).toMatchObject({ status: "sent", error: null, to: "ada@example.com", kind: "send-email", workflowId });
    expect(entry.id).toMatch(/^mail_/);
    expect(entry.sentAt).toBeGreaterThanOrEqual(before);

    const [mail] = await sink.waitFor(1);
    expect(mail!.recipients).toEqual(["ada@example.com"]);
    expect(mail!.from).toBe("runnel@example.test");
    expect(mail!.to).toBe("ada@example.com");
    expect(mail!.subject).toBe("Hello from a step");
    expect(mail!.headers.from).toBe("Runnel <runnel@example.test>");
    expect(mail!.body).toContain("The body of the mail.");

    const stored = await store.listOutbox(ownerId, parsePageRequest({}));
    expect(stored.items).toEqual([entry]);
  });

  it("records and sends a keyed mail once, however often it is sent again with its key (a repeated $.send.email attempt)", async () => {
    const mailer = mailerFor(sink.url());
    const mail = { ownerId, to: "ada@example.com", subject: "Order o-1", text: "Once.", kind: "send-email" as const, idempotencyKey: "run_x:0:0", createdAt: 1_700_000_000_000 };
    const first = await mailer.send(mail);
    expect(first).toMatchObject({ status: "sent", createdAt: 1_700_000_000_000 });
    await sink.waitFor(1);
    const again = await mailer.send(mail);
    expect(again).toEqual(first);
    // Another key is another mail.
    const other = await mailer.send({ ...mail, idempotencyKey: "run_x:0:1" });
    expect(other.id).not.toBe(first.id);
    await sink.waitFor(2);
    expect(sink.received.map((received) => received.subject)).toEqual(["Order o-1", "Order o-1"]);
    expect((await store.listOutbox(ownerId, parsePageRequest({}))).items.map((entry) => entry.id).sort()).toEqual([first.id, other.id].sort());
  });

  it("sends the html part too, over the same pooled connection", async () => {
    const mailer = mailerFor(sink.url());
    const first = await mailer.send({ ownerId, to: "ada@example.com", subject: "one", text: "plain one", html: "<p>rich one</p>", kind: "send-email" });
    const second = await mailer.send({ ownerId, to: "bob@example.com", subject: "two", text: "plain two", kind: "error-notification" });
    expect([first.status, second.status]).toEqual(["sent", "sent"]);
    const [one, two] = await sink.waitFor(2);
    expect(one!.headers["content-type"]).toMatch(/^multipart\/alternative/);
    expect(one!.body).toContain("plain one");
    expect(one!.body).toContain("<p>rich one</p>");
    expect(two!.subject).toBe("two");
    expect(two!.recipients).toEqual(["bob@example.com"]);
  });

  it("records a recipient the server refuses as failed, with its answer, and does not throw", async () => {
    const mailer = mailerFor(sink.url());
    const entry = await mailer.send({ ownerId, to: "ghost@nowhere.test", subject: "Lost", text: "x", kind: "send-email" });
    expect(entry.status).toBe("failed");
    expect(entry.sentAt).toBeNull();
    expect(entry.error).toMatch(/550/);
    expect(entry.error).toContain("Mailbox ghost@nowhere.test does not exist");
    expect((await store.listOutbox(ownerId, parsePageRequest({}))).items[0]).toMatchObject({ id: entry.id, status: "failed", error: entry.error });
    expect(sink.received).toEqual([]);

    // The pool stays usable for the next mail.
    expect((await mailer.send({ ownerId, to: "ada@example.com", subject: "Found", text: "y", kind: "send-email" })).status).toBe("sent");
  });

  it("records failed login as failed, never showing the password", async () => {
    const mailer = mailerFor(sink.url({ user: "runnel", pass: "wrong-Pa$$word" }));
    const entry = await mailer.send({ ownerId, to: "ada@example.com", subject: "Hi", text: "x", kind: "error-notification" });
    expect(entry.status).toBe("failed");
    expect(entry.error).toMatch(/535/);
    expect(entry.error).toMatch(/EAUTH|Invalid login/);
    expect(entry.error).not.toContain("wrong-Pa$$word");
    expect(entry.error).not.toContain(encodeURIComponent("wrong-Pa$$word"));

    const right = mailerFor(sink.url({ user: "runnel", pass: "right-pass" }));
    expect((await right.send({ ownerId, to: "ada@example.com", subject: "Hi", text: "x", kind: "error-notification" })).status).toBe("sent");
  });

  it("records a server that cannot be reached as failed", async () => {
    const mailer = mailerFor(`smtp://127.0.0.1:${await freePort()}`);
    const entry = await mailer.send({ ownerId, to: "ada@example.com", subject: "Hi", text: "x", kind: "send-email" });
    expect(entry.status).toBe("failed");
    expect(entry.error).toMatch(/ECONNREFUSED/);
  });

  it("keeps the mail in the outbox without SMTP, or without a recipient", async () => {
    const offline = await mailerFor(null).send({ ownerId, to: "ada@example.com", subject: "No SMTP", text: "x", kind: "error-notification" });
    expect(offline).toMatchObject({ status: "outbox", error: null, sentAt: null });
    await sleep(3); // ids sort by millisecond
    const nobody = await mailerFor(sink.url()).send({ ownerId, to: null, subject: "No recipient", text: "x", kind: "error-notification" });
    expect(nobody).toMatchObject({ status: "outbox", to: null });
    // The outbox says why, and what to do.
    expect(nobody.error).toContain("you have no e-mail address");
    expect(nobody.error).toContain("runnel users update --email");
    await sleep(50);
    expect(sink.received).toEqual([]);
    const listed = await store.listOutbox(ownerId, parsePageRequest({}));
    expect(listed.items.map((mail) => [mail.subject, mail.status])).toEqual([
      ["No recipient", "outbox"],
      ["No SMTP", "outbox"],
    ]);
  });

  it("throws when the store cannot record the mail", async () => {
    const mailer = mailerFor(sink.url());
    await expect(mailer.send({ ownerId: newId("user"), to: "ada@example.com", subject: "orphan", text: "x", kind: "send-email" })).rejects.toThrow();
    expect(sink.received).toEqual([]);
  });
});

describe("the outbox through the API and the CLI", () => {
  let sink: SmtpSink;
  let server: TestServer;
  let configHome: string;
  let ada: { id: string; key: string };
  let bob: { id: string; key: string };

  beforeAll(async () => {
    sink = await startSmtpSink({ rejectRecipientsEndingWith: "@nowhere.test" });
    server = await startTestServer({ RUNNEL_SMTP_URL: sink.url(), RUNNEL_MAIL_FROM: "Runnel Test <runnel@example.test>" });
    configHome = await mkdtemp(join(tmpdir(), "runnel-outbox-cli-"));
    ada = await createUser(server, "ada");
    bob = await createUser(server, "bob");
    const mailer = server.server.engine.mailer!;
    const sends = [
      { ownerId: ada.id, to: "ada@example.com", subject: "first", text: "1", kind: "send-email" as const },
      { ownerId: bob.id, to: "bob@example.com", subject: "bob's only", text: "b", kind: "send-email" as const },
      { ownerId: ada.id, to: "ghost@nowhere.test", subject: "second", text: "2", kind: "send-email" as const },
      { ownerId: ada.id, to: null, subject: "third", text: "3", kind: "error-notification" as const, workflowId: "p_0000000000000000000000000a" },
    ];
    for (const mail of sends) {
      await mailer.send(mail);
      await sleep(3); // ids sort by millisecond
    }
  });

  afterAll(async () => {
    await server?.close();
    await sink?.close();
    if (configHome) await rm(configHome, { recursive: true, force: true });
  });

  it("is wired from the configuration", () => {
    expect(server.server.engine.mailer?.delivers).toBe(true);
    expect(sink.received.map((mail) => [mail.subject, mail.headers.from])).toEqual([
      ["first", "Runnel Test <runnel@example.test>"],
      ["bob's only", "Runnel Test <runnel@example.test>"],
    ]);
  });

  it("lists the caller's mails newest first, paged, and no one else's", async () => {
    const all = await call(server.url, "GET", "/v1/outbox", { key: ada.key });
    expect(all.status).toBe(200);
    expect(all.body.page_info).toMatchObject({ total_count: 3, count: 3 });
    expect(all.body.data.map((mail: { subject: string }) => mail.subject)).toEqual(["third", "second", "first"]);
    const [third, second, first] = all.body.data;
    expect(Object.keys(first).sort()).toEqual(["created_at", "error", "html", "id", "kind", "sent_at", "status", "subject", "text", "to", "workflow_id"]);
    expect(first).toMatchObject({ to: "ada@example.com", text: "1", html: null, kind: "send-email", workflow_id: null, status: "sent", error: null });
    expect(first.created_at).toBe(Math.floor(first.created_at));
    expect(first.created_at).toBeLessThan(Date.now() / 1000 + 1);
    expect(first.sent_at).toBeGreaterThanOrEqual(first.created_at);
    expect(second).toMatchObject({ status: "failed", sent_at: null });
    expect(second.error).toContain("550");
    expect(third).toMatchObject({ to: null, status: "outbox", kind: "error-notification", workflow_id: "p_0000000000000000000000000a" });

    const page1 = await call(server.url, "GET", "/v1/outbox?limit=2", { key: ada.key });
    expect(page1.body.data.map((mail: { subject: string }) => mail.subject)).toEqual(["third", "second"]);
    expect(page1.body.page_info).toMatchObject({ total_count: 3, count: 2, start_cursor: third.id, end_cursor: second.id });
    const page2 = await call(server.url, "GET", `/v1/outbox?limit=2&after=${page1.body.page_info.end_cursor}`, { key: ada.key });
    expect(page2.body.data.map((mail: { subject: string }) => mail.subject)).toEqual(["first"]);
    const back = await call(server.url, "GET", `/v1/outbox?limit=2&before=${first.id}`, { key: ada.key });
    expect(back.body.data.map((mail: { subject: string }) => mail.subject)).toEqual(["third", "second"]);

    const bobs = await call(server.url, "GET", "/v1/outbox", { key: bob.key });
    expect(bobs.body.data.map((mail: { subject: string }) => mail.subject)).toEqual(["bob's only"]);
    expect(bobs.body.page_info.total_count).toBe(1);
    const admins = await call(server.url, "GET", "/v1/outbox", { key: server.adminKey });
    expect(admins.body).toEqual({ page_info: { total_count: 0, count: 0, start_cursor: null, end_cursor: null }, data: [] });
  });

  it("needs a key and checks its paging parameters", async () => {
    expect((await call(server.url, "GET", "/v1/outbox")).status).toBe(401);
    const bad = await call(server.url, "GET", "/v1/outbox?limit=0", { key: ada.key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("ValidationError");
    const both = await call(server.url, "GET", "/v1/outbox?before=a&after=b", { key: ada.key });
    expect(both.status).toBe(400);
  });

  it("is described in the OpenAPI document", async () => {
    const doc = await call(server.url, "GET", "/v1/openapi.json");
    expect(doc.body.paths["/v1/outbox"].get).toBeDefined();
  });

  it("runnel outbox prints the caller's mails, newest first", async () => {
    const env = { XDG_CONFIG_HOME: configHome, HOME: configHome };
    const login = await runCli(["login", "--server", server.url, "--api-key", ada.key], { env });
    expect(login.code).toBe(0);

    const table = await runCli(["outbox"], { env });
    expect(table.code).toBe(0);
    const lines = table.stdout.split("\n");
    const header = lines.find((line) => line.includes("status"))!;
    expect(header).toMatch(/time.*status.*to.*subject/);
    const rows = lines.filter((line) => /third|second|first/.test(line));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(/outbox.*\(no address\).*third/);
    expect(rows[1]).toMatch(/failed.*ghost@nowhere\.test.*second/);
    expect(rows[2]).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ.*sent.*ada@example\.com.*first/);
    expect(table.stdout).not.toContain("bob's only");
    expect(table.stderr).toMatch(/failed: .*550/);
    expect(table.stderr).toContain("Set one with `runnel users update --email you@example.com`");

    const json = await runCli(["outbox", "-n", "1", "--json"], { env });
    expect(json.code).toBe(0);
    const page = JSON.parse(json.stdout);
    expect(page.data.map((mail: { subject: string }) => mail.subject)).toEqual(["third"]);
    expect(page.page_info.total_count).toBe(3);
  });
});
