import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp.js";
import { fire, throwingStep } from "./error-helpers.js";
import { createWorkflow, waitFor } from "./helpers.js";

// A server that delivers mail, whose admin's address comes from RUNNEL_ADMIN_EMAIL on its first start.
let sink: SmtpSink;
let server: TestServer;
beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ RUNNEL_SMTP_URL: sink.url(), RUNNEL_ADMIN_EMAIL: "boss@example.test" });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

async function outboxOf(key: string): Promise<any[]> {
  const listed = await call(server.url, "GET", "/v1/outbox?limit=100", { key });
  expect(listed.status).toBe(200);
  return listed.body.data;
}

describe("where error mail goes", () => {
  it("gives the admin made on first start the address in RUNNEL_ADMIN_EMAIL", async () => {
    const me = await call(server.url, "GET", "/v1/users/me", { key: server.adminKey });
    expect(me.body.data).toMatchObject({ username: "admin", email: "boss@example.test" });
  });

  it("keeps a notice to a user with no address in the outbox saying how to set one; once set (PATCH /v1/users/me), notices are mailed there", async () => {
    const { key } = await createUser(server, "noaddr");
    const workflow = await createWorkflow(server, key, { name: "Lost Notices", trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep("first") }] });
    await fire(workflow.trigger.endpoint_url);
    const [kept] = await waitFor(() => outboxOf(key), (mails) => mails.length === 1, "the notice in the outbox");
    expect(kept).toMatchObject({ to: null, status: "outbox", kind: "error-notification" });
    expect(kept.error).toContain("you have no e-mail address");
    expect(kept.error).toContain("runnel users update --email");

    const bad = await call(server.url, "PATCH", "/v1/users/me", { key, json: { email: "not an address" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe("email");
    expect(bad.body.error.message).toContain("you@example.com");
    const set = await call(server.url, "PATCH", "/v1/users/me", { key, json: { email: "found@example.test" } });
    expect(set.status).toBe(200);
    expect(set.body.data.email).toBe("found@example.test");
    expect((await call(server.url, "GET", "/v1/users/me", { key })).body.data.email).toBe("found@example.test");

    // Another workflow's error (the once-a-day rule is per workflow and code) is mailed to the new address.
    const second = await createWorkflow(server, key, { name: "Heard Notices", trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep("second") }] });
    await fire(second.trigger.endpoint_url);
    await waitFor(async () => sink.received.filter((mail) => mail.recipients.includes("found@example.test")), (mails) => mails.length === 1, "the mail");
    const [sent] = await outboxOf(key);
    expect(sent).toMatchObject({ to: "found@example.test", status: "sent", error: null });

    const cleared = await call(server.url, "PATCH", "/v1/users/me", { key, json: { email: null } });
    expect(cleared.body.data.email).toBeNull();
  });

  it("sets the address with `runnel users update --email`, and says which flag to pass without one", async () => {
    const { key } = await createUser(server, "clia");
    const env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: server.dataDir, XDG_CONFIG_HOME: server.dataDir };
    const updated = await runCli(["users", "update", "--email", "clia@example.test"], { env });
    expect(updated.stderr).toBe("");
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain("Your e-mail address is now clia@example.test");
    expect((await call(server.url, "GET", "/v1/users/me", { key })).body.data.email).toBe("clia@example.test");

    const nothing = await runCli(["users", "update"], { env });
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain("pass --email");
    const refused = await runCli(["users", "update", "--email", "clia"], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Error (ValidationError): email must be an address like you@example.com");
  });
});
