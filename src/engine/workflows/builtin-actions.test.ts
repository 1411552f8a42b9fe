import { describe, expect, it } from "vitest";
import { builtinActions, ERROR_MAIL_ACTION, errorMail } from "./builtin-actions.js";
import type { ErrorEventBody } from "../../domain/error-events.js";

const body: ErrorEventBody = {
  original_event: { a: 1 },
  original_context: { id: "1-0", ts: "t", workflow_id: "p_wf", deployment_id: "d_1", source_type: "HTTP", verified: false, owner_id: "u_1", platform_version: "0.1.0" },
  error: { code: "UserError", msg: "kaput", cellId: "c_step", ts: "2026-01-01T00:00:00.000Z", stack: "Error: kaput\n    at run (step.js:1:1)" },
};

describe("the error mail", () => {
  it("names the workflow and the step by their names (ids beside them), the message, the stack head and how to replay", () => {
    const mail = errorMail(body, "http://runnel.test", { name: "Order Sync", nameSlug: "order-sync", steps: [{ id: "c_step", name: "fetch" }] });
    expect(mail.subject).toBe("[Runnel] Order Sync failed in step fetch: UserError: kaput");
    expect(mail.text).toContain('Workflow "Order Sync" (p_wf) failed in step "fetch" (c_step)');
    expect(mail.text).toContain("at run (step.js:1:1)");
    expect(mail.text).toContain("runnel errors replay order-sync");
    expect(mail.text).toContain("http://runnel.test/v1/workflows/p_wf/$errors/event_summaries");
  });

  it("names a workflow deleted since by its id, and cuts a long subject at a word", () => {
    const long = { ...body, error: { ...body.error, msg: "word ".repeat(80).trim() } };
    const mail = errorMail(long, "http://runnel.test", null);
    expect(mail.text).toContain("Workflow p_wf failed in step c_step");
    expect(mail.subject.length).toBeLessThanOrEqual(200);
    expect(mail.subject).toMatch(/ word…$/);
  });

  it("mails the first error of a code per workflow and day, and says why it skips the others", async () => {
    const claimed = new Set<string>();
    const sent: string[] = [];
    const actions = builtinActions({
      claimDailyNotice: async (owner, workflow, code, day) => !claimed.has(`${owner} ${workflow} ${code} ${day}`) && Boolean(claimed.add(`${owner} ${workflow} ${code} ${day}`)),
      sendMail: async (mail) => {
        sent.push(mail.subject);
        return { id: "mail_1", status: "outbox" };
      },
      baseUrl: () => "",
      findWorkflow: async () => null,
      now: () => Date.parse("2026-01-01T12:00:00Z"),
    });
    const input = { workflow: { ownerId: "u_1" } as never, step: {} as never, props: {}, steps: { trigger: { event: body } }, runId: "run_1" };
    expect(await actions.run(ERROR_MAIL_ACTION, input)).toMatchObject({ value: { mailed: true, mail_id: "mail_1" } });
    expect(await actions.run(ERROR_MAIL_ACTION, input)).toMatchObject({ value: { mailed: false, reason: "already-mailed-today" } });
    expect(sent).toHaveLength(1);
    await expect(actions.run(ERROR_MAIL_ACTION, { ...input, steps: { trigger: { event: { not: "an error" } } } })).rejects.toThrow(/\$errors events only/);
    await expect(actions.run("$runnel/nothing", input)).rejects.toThrow(/no built-in action/);
  });
});
