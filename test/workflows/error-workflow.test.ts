import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { startSmtpSink, type ReceivedMail, type SmtpSink } from "../helpers/smtp.js";
import { errorWorkflowOf, fire, fireAll, OK_STEP, runCount, settle, throwingStep } from "./error-helpers.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

// One server that delivers mail to a real SMTP server, one that has none (mails stay in the outbox).
let sink: SmtpSink;
let server: TestServer;
let mailless: TestServer;
beforeAll(async () => {
  sink = await startSmtpSink();
  [server, mailless] = await Promise.all([startTestServer({ RUNNEL_SMTP_URL: sink.url() }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([server?.close(), mailless?.close()]);
  await sink?.close();
});

/** A user with an email address: the error workflow's mails go there. Each test has its own, so its own error workflow. */
async function userWithEmail(on: TestServer, username: string): Promise<{ id: string; key: string; email: string }> {
  const email = `${username}@example.test`;
  const created = await call(on.url, "POST", "/v1/users", { key: on.adminKey, json: { username, email } });
  if (created.status !== 201) throw new Error(`creating ${username} failed: ${created.status} ${JSON.stringify(created.body)}`);
  expect(created.body.data.email).toBe(email);
  return { id: created.body.data.id, key: created.body.data.api_key.key, email };
}

function mailsTo(email: string): ReceivedMail[] {
  return sink.received.filter((mail) => mail.recipients.includes(email));
}

/** The text of a received mail, quoted-printable decoded (long lines arrive soft-broken). */
function textOf(mail: ReceivedMail): string {
  const encoding = (mail.headers["content-transfer-encoding"] ?? "").toLowerCase();
  if (encoding !== "quoted-printable") return mail.body;
  const bytes = mail.body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, "latin1").toString("utf8");
}

async function outboxOf(on: TestServer, key: string): Promise<any[]> {
  const listed = await call(on.url, "GET", "/v1/outbox?limit=100", { key });
  expect(listed.status).toBe(200);
  return listed.body.data;
}

/** A step that throws a plain string (NonErrorThrown) when the body says so, an Error otherwise. */
const TWO_CODES_STEP = `export default defineComponent({ async run({ steps }) {
  const body = steps.trigger.event.body;
  if (body.kind === "string") throw "not an error";
  throw new Error("same again " + body.n);
} })`;

describe.concurrent("the global error workflow (each test its own user, so its own error workflow)", () => {
  it("is created on first use, listens to p_* $errors, and mails a summary through SMTP", async () => {
    const user = await userWithEmail(server, "mia");
    expect(await errorWorkflowOf(server, user.key)).toBeUndefined();

    const workflow = await createWorkflow(server, user.key, {
      name: "Mailed",
      trigger: { type: "http" },
      steps: [
        { name: "prepare", code: OK_STEP },
        { name: "explode", code: throwingStep("the disk is on fire") },
      ],
    });
    const errorWorkflow = await errorWorkflowOf(server, user.key);
    expect(errorWorkflow).toMatchObject({ is_error_workflow: true, active: true, trigger: { type: "none", source_id: null }, steps: [{ name: "notify", key: "$runnel/error-mail", component_id: null }] });
    // Its own errors are never routed anywhere.
    expect(errorWorkflow.settings.error_notifications).toBe(false);
    const listedWorkflows = (await call(server.url, "GET", "/v1/users/me/workflows?limit=100", { key: user.key })).body.data;
    expect(listedWorkflows.filter((candidate: any) => candidate.is_error_workflow)).toHaveLength(1);
    // A second workflow does not make a second error workflow.
    await createWorkflow(server, user.key, { name: "Another", trigger: { type: "http" }, steps: [{ name: "ok", code: OK_STEP }] });
    expect((await call(server.url, "GET", "/v1/users/me/workflows?limit=100", { key: user.key })).body.data.filter((candidate: any) => candidate.is_error_workflow)).toHaveLength(1);

    const subscriptions = (await call(server.url, "GET", "/v1/users/me/subscriptions", { key: user.key })).body.data;
    expect(subscriptions).toContainEqual({ id: expect.stringMatching(/^sub_/), emitter_id: "p_*", listener_id: errorWorkflow.id, event_name: "$errors", created_at: expect.any(Number) });

    await fire(workflow.trigger.endpoint_url, { n: 1 });
    const [mail] = await waitFor(async () => mailsTo(user.email), (mails) => mails.length === 1, "the mail");
    const error = (await errorsOf(server, user.key, workflow.id)).data[0].event.error;
    expect(error).toMatchObject({ code: "UserError", msg: "the disk is on fire 1", cellId: workflow.steps[1].id });

    expect(mail!.recipients).toEqual([user.email]);
    // Named as the owner knows it: the workflow's and the step's names, ids beside them in the text.
    expect(mail!.subject).toContain("Mailed failed in step explode");
    expect(mail!.subject).toContain("UserError");
    expect(mail!.subject).toContain("the disk is on fire 1");
    const text = textOf(mail!);
    expect(text).toContain(workflow.id);
    expect(text).toContain(`Workflow "Mailed" (${workflow.id}) failed in step "explode" (${workflow.steps[1].id})`);
    expect(text).toContain("UserError: the disk is on fire 1");
    // The head of the stack: its first line and the first frame.
    const stackLines = error.stack.split("\n");
    expect(text).toContain(stackLines[0]);
    expect(text).toContain(stackLines[1].trim());
    expect(text).toContain(`runnel errors replay ${workflow.name_slug}`);
    expect(text).toContain(`${server.url}/v1/workflows/${workflow.id}/$errors/event_summaries?expand=event`);

    // The run of the error workflow: triggered by the error event, mailed.
    const [run] = await waitFor(() => runsOf(server, user.key, errorWorkflow.id), (runs) => runs.length === 1, "the error workflow's run");
    expect(run.status).toBe("success");
    expect(run.trigger.emitter_id).toBe(workflow.id);
    expect(run.trigger.event).toMatchObject({ original_event: { body: { n: 1 } }, original_context: { workflow_id: workflow.id }, error: { code: "UserError", cellId: workflow.steps[1].id } });
    expect(run.steps[0].$return_value).toMatchObject({ mailed: true, status: "sent" });

    const outbox = await outboxOf(server, user.key);
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({ to: user.email, kind: "error-notification", workflow_id: workflow.id, status: "sent", subject: mail!.subject });
    expect(outbox[0].id).toBe(run.steps[0].$return_value.mail_id);
  });

  it("first uses at once still make one error workflow, and an error runs it once", async () => {
    const user = await userWithEmail(server, "flo");
    const created = await Promise.all(
      [0, 1, 2, 3].map((index) =>
        call(server.url, "POST", "/v1/workflows", { key: user.key, json: { name: `At once ${index}`, trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep("at once") }] } }),
      ),
    );
    expect(created.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const workflows = (await call(server.url, "GET", "/v1/users/me/workflows?limit=100", { key: user.key })).body.data;
    const errorWorkflows = workflows.filter((candidate: any) => candidate.is_error_workflow);
    expect(errorWorkflows).toHaveLength(1);
    const globs = (await call(server.url, "GET", "/v1/users/me/subscriptions", { key: user.key })).body.data.filter((subscription: any) => subscription.emitter_id === "p_*");
    expect(globs).toEqual([expect.objectContaining({ listener_id: errorWorkflows[0].id, event_name: "$errors" })]);
    await fire(created[2]!.body.data.trigger.endpoint_url);
    await waitFor(() => runCount(server, user.key, errorWorkflows[0].id), (count) => count === 1, "the error workflow's run");
    await settle();
    expect(await runCount(server, user.key, errorWorkflows[0].id)).toBe(1);
    expect(mailsTo(user.email)).toHaveLength(1);
  });

  it("without SMTP, the mail waits in the outbox", async () => {
    const user = await userWithEmail(mailless, "noel");
    const workflow = await createWorkflow(mailless, user.key, { name: "Unmailed", trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep("nobody hears this") }] });
    await fire(workflow.trigger.endpoint_url);
    const outbox = await waitFor(() => outboxOf(mailless, user.key), (mails) => mails.length === 1, "the outbox mail");
    expect(outbox[0]).toMatchObject({ to: user.email, kind: "error-notification", workflow_id: workflow.id, status: "outbox", error: null, sent_at: null });
    expect(outbox[0].subject).toContain("nobody hears this");
    expect(outbox[0].text).toContain(workflow.steps[0].id);
    expect(outbox[0].text).toContain(`runnel errors replay ${workflow.name_slug}`);
  });

  it("mails once a day per error code per workflow; every error is still listed", async () => {
    const user = await userWithEmail(server, "otto");
    const first = await createWorkflow(server, user.key, { name: "Noisy", trigger: { type: "http" }, steps: [{ name: "explode", code: TWO_CODES_STEP }] });
    const second = await createWorkflow(server, user.key, { name: "Also noisy", trigger: { type: "http" }, steps: [{ name: "explode", code: TWO_CODES_STEP }] });
    const errorWorkflow = await errorWorkflowOf(server, user.key);

    // Three of the same code at once: the claims race, one wins.
    await fireAll(first.trigger.endpoint_url, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    await waitFor(() => runCount(server, user.key, errorWorkflow.id), (count) => count === 3, "three error workflow runs");
    expect(mailsTo(user.email)).toHaveLength(1);
    const runs = await runsOf(server, user.key, errorWorkflow.id);
    expect(runs.map((run) => run.status)).toEqual(["success", "success", "success"]);
    expect(runs.map((run) => run.steps[0].$return_value.mailed).sort()).toEqual([false, false, true]);
    expect(runs.find((run) => !run.steps[0].$return_value.mailed).steps[0].$return_value).toEqual({ mailed: false, reason: "already-mailed-today" });

    // Another code of the same workflow: a second mail.
    await fire(first.trigger.endpoint_url, { kind: "string" });
    await waitFor(async () => mailsTo(user.email), (mails) => mails.length === 2, "the NonErrorThrown mail");
    expect(mailsTo(user.email)[1]!.subject).toContain("NonErrorThrown");
    expect(mailsTo(user.email)[1]!.subject).toContain("Noisy failed");

    // The same code in another workflow: its own mail.
    await fire(second.trigger.endpoint_url, { n: 9 });
    await waitFor(async () => mailsTo(user.email), (mails) => mails.length === 3, "the other workflow's mail");
    expect(mailsTo(user.email)[2]!.subject).toContain("Also noisy failed");
    expect(mailsTo(user.email)[2]!.subject).toContain("UserError");

    await waitFor(() => runCount(server, user.key, errorWorkflow.id), (count) => count === 5, "five error workflow runs");
    await settle();
    expect(mailsTo(user.email)).toHaveLength(3);
    expect(await outboxOf(server, user.key)).toHaveLength(3);
    const listed = await errorsOf(server, user.key, first.id);
    expect(listed.page_info.total_count).toBe(4);
    expect(listed.data.map((item: any) => item.event.error.code).sort()).toEqual(["NonErrorThrown", "UserError", "UserError", "UserError"]);
    expect((await errorsOf(server, user.key, second.id)).page_info.total_count).toBe(1);
  });

  it("never loops: the error workflow's own errors are listed, not routed, and the server keeps serving", async () => {
    const user = await userWithEmail(server, "lou");
    const workflow = await createWorkflow(server, user.key, { name: "Trouble", trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep("first trouble") }] });
    const errorWorkflow = await errorWorkflowOf(server, user.key);
    // The error workflow itself fails now; even asking it to route its errors changes nothing.
    const updated = await call(server.url, "PUT", `/v1/workflows/${errorWorkflow.id}`, {
      key: user.key,
      json: { steps: [{ name: "notify", code: throwingStep("the handler broke") }], settings: { error_notifications: true } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: errorWorkflow.id, is_error_workflow: true });
    expect((await errorWorkflowOf(server, user.key)).id).toBe(errorWorkflow.id);

    await fire(workflow.trigger.endpoint_url);
    const handlerErrors = await waitFor(() => errorsOf(server, user.key, errorWorkflow.id), (body) => body.data.length === 1, "the error workflow's error");
    expect(handlerErrors.data[0].event.error).toMatchObject({ code: "UserError", msg: "the handler broke", cellId: updated.body.data.steps[0].id });
    // Its original event is the error event it was handling.
    expect(handlerErrors.data[0].event.original_event).toMatchObject({ error: { msg: "first trouble" }, original_context: { workflow_id: workflow.id } });

    // A later error still reaches it, and by then a loop would have shown.
    await fire(workflow.trigger.endpoint_url);
    await waitFor(() => runCount(server, user.key, errorWorkflow.id), (count) => count === 2, "the second handling run");
    await settle();
    const runs = await runsOf(server, user.key, errorWorkflow.id);
    expect(runs).toHaveLength(2);
    expect(runs.every((run) => run.trigger.emitter_id === workflow.id && run.status === "error")).toBe(true);
    expect((await errorsOf(server, user.key, errorWorkflow.id)).page_info.total_count).toBe(2);
    expect((await errorsOf(server, user.key, workflow.id)).page_info.total_count).toBe(2);
    expect(mailsTo(user.email)).toHaveLength(0);
    expect((await call(server.url, "GET", "/v1/users/me", { key: user.key })).status).toBe(200);
  });

  it("a workflow listening to another's $errors that fails itself: its error is listed, not routed", async () => {
    const user = await userWithEmail(server, "ben");
    const source = await createWorkflow(server, user.key, { name: "Source of errors", trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep("upstream") }] });
    const listener = await createWorkflow(server, user.key, { name: "Broken listener", trigger: { type: "http" }, steps: [{ name: "handle", code: throwingStep("downstream") }] });
    const subscribed = await call(server.url, "POST", `/v1/subscriptions?emitter_id=${source.id}&listener_id=${listener.id}&event_name=$errors`, { key: user.key });
    expect(subscribed.status).toBe(200);
    const errorWorkflow = await errorWorkflowOf(server, user.key);

    await fire(source.trigger.endpoint_url);
    const listenerErrors = await waitFor(() => errorsOf(server, user.key, listener.id), (body) => body.data.length === 1, "the listener's error");
    expect(listenerErrors.data[0].event.error.msg).toBe("downstream");
    expect(listenerErrors.data[0].event.original_event).toMatchObject({ error: { msg: "upstream" } });

    // Then an error of the listener through its own trigger: that one is routed, and nothing more arrives.
    await fire(listener.trigger.endpoint_url);
    await waitFor(() => runsOf(server, user.key, errorWorkflow.id), (runs) => runs.some((run) => run.trigger.emitter_id === listener.id), "the routed listener error");
    await settle();
    const runs = await runsOf(server, user.key, errorWorkflow.id);
    // The source's error and the listener's own (HTTP-triggered) one; not the one it raised while handling.
    expect(runs.map((run) => run.trigger.emitter_id).sort()).toEqual([listener.id, source.id].sort());
    expect(runs.find((run) => run.trigger.emitter_id === listener.id).trigger.event.original_context.source_type).toBe("HTTP");
    expect((await errorsOf(server, user.key, listener.id)).page_info.total_count).toBe(2);
    expect(mailsTo(user.email).map((mail) => mail.subject.includes("Source of errors failed") || mail.subject.includes("Broken listener failed"))).toEqual([true, true]);
  });

  it("settings.error_notifications = false: listed, not mailed, not run by the error workflow; explicit listeners still hear it", async () => {
    const user = await userWithEmail(server, "quinn");
    const quiet = await createWorkflow(server, user.key, {
      name: "Quiet",
      trigger: { type: "http" },
      settings: { error_notifications: false },
      steps: [{ name: "explode", code: throwingStep("hush") }],
    });
    expect(quiet.settings.error_notifications).toBe(false);
    const listener = await createWorkflow(server, user.key, { name: "Ears", trigger: { type: "http" }, steps: [{ name: "hear", code: OK_STEP }] });
    expect((await call(server.url, "POST", `/v1/subscriptions?emitter_id=${quiet.id}&listener_id=${listener.id}&event_name=$errors`, { key: user.key })).status).toBe(200);
    const errorWorkflow = await errorWorkflowOf(server, user.key);

    await fire(quiet.trigger.endpoint_url);
    await waitFor(() => errorsOf(server, user.key, quiet.id), (body) => body.data.length === 1, "the listed error");
    const [heard] = await waitFor(() => runsOf(server, user.key, listener.id), (runs) => runs.length === 1, "the explicit listener's run");
    expect(heard.trigger.event.error.msg).toBe("hush");
    // Another workflow's error goes through, so the quiet one's would have too by now.
    const loud = await createWorkflow(server, user.key, { name: "Loud", trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep("shout") }] });
    await fire(loud.trigger.endpoint_url);
    await waitFor(() => runCount(server, user.key, errorWorkflow.id), (count) => count === 1, "the loud error's handling");
    await settle();
    const runs = await runsOf(server, user.key, errorWorkflow.id);
    expect(runs.map((run) => run.trigger.emitter_id)).toEqual([loud.id]);
    expect(mailsTo(user.email).map((mail) => mail.subject.includes("Loud failed"))).toEqual([true]);
    expect((await outboxOf(server, user.key)).map((mail) => mail.workflow_id)).toEqual([loud.id]);

    // Turned back on: routed again.
    expect((await call(server.url, "PUT", `/v1/workflows/${quiet.id}`, { key: user.key, json: { settings: { error_notifications: true } } })).body.data.settings.error_notifications).toBe(true);
    await fire(quiet.trigger.endpoint_url);
    await waitFor(() => runsOf(server, user.key, errorWorkflow.id), (runs) => runs.some((run) => run.trigger.emitter_id === quiet.id), "the quiet workflow's routed error");
  });
});
