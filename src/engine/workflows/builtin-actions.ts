import type { ErrorEventBody } from "../../domain/error-events.js";
import { cutAtWord } from "../../domain/error-text.js";
import type { Workflow, WorkflowStep } from "../../domain/workflows.js";

/** What a built-in action gets: the same as a code step, run in the server (it is Runnel's own, trusted code). */
export interface BuiltinInput {
  workflow: Workflow;
  step: WorkflowStep;
  props: Record<string, unknown>;
  steps: Record<string, unknown>;
  runId: string;
}

export interface BuiltinResult {
  value?: unknown;
  summary?: string;
  exports?: Record<string, unknown>;
}

export interface BuiltinActions {
  run(key: string, input: BuiltinInput): Promise<BuiltinResult>;
}

/** What a mail needs to name a workflow and its steps the way its owner does. */
export interface NamedWorkflow {
  name: string;
  nameSlug: string;
  steps: ReadonlyArray<{ id: string; name: string }>;
}

/** The key of the global error workflow's default step. */
export const ERROR_MAIL_ACTION = "$runnel/error-mail";

export interface ErrorMailDependencies {
  /** True for the first claim of (owner, workflow, code, UTC day): the once-a-day rule. */
  claimDailyNotice(ownerId: string, workflowId: string, code: string, day: string): Promise<boolean>;
  /** Records the mail in the outbox and sends it when SMTP is configured. */
  sendMail(mail: { ownerId: string; subject: string; text: string; workflowId: string }): Promise<{ id: string; status: string }>;
  /** Where the owner's workflows are inspected: the server's public address. */
  baseUrl(): string;
  /** The failed workflow as its owner knows it (name, slug, step names by cellId); null when it is gone. */
  findWorkflow(ownerId: string, workflowId: string): Promise<NamedWorkflow | null>;
  now?: () => number;
}

/** Runnel's built-in actions, by key. */
export function builtinActions(mail: ErrorMailDependencies): BuiltinActions {
  return {
    async run(key, input) {
      if (key === ERROR_MAIL_ACTION) return mailError(mail, input);
      throw new Error(`There is no built-in action "${key}".`);
    },
  };
}

/**
 * The global error workflow's default step: mails a summary of the error, at
 * most once a day per error code per workflow (later ones of that day are
 * still listed in the workflow's $errors).
 */
async function mailError(mail: ErrorMailDependencies, input: BuiltinInput): Promise<BuiltinResult> {
  const trigger = input.steps.trigger as { event?: ErrorEventBody } | undefined;
  const body = trigger?.event;
  if (!body?.error || !body.original_context) throw new Error("The error mail step runs on $errors events only; this run's trigger event is not one.");
  const workflowId = body.original_context.workflow_id;
  const day = new Date((mail.now ?? Date.now)()).toISOString().slice(0, 10);
  const first = await mail.claimDailyNotice(input.workflow.ownerId, workflowId, body.error.code, day);
  if (!first) return { value: { mailed: false, reason: "already-mailed-today" }, summary: `Not mailed: a ${body.error.code} of ${workflowId} was mailed today already` };
  const { subject, text } = errorMail(body, mail.baseUrl(), await mail.findWorkflow(input.workflow.ownerId, workflowId));
  const sent = await mail.sendMail({ ownerId: input.workflow.ownerId, subject, text, workflowId });
  return { value: { mailed: true, mail_id: sent.id, status: sent.status }, summary: `Mailed: ${subject}` };
}

/**
 * The mail: what failed, where (the workflow and step by their names, ids
 * beside them), the head of the stack, and how to look and replay. A
 * workflow deleted since is named by its id alone.
 */
export function errorMail(body: ErrorEventBody, baseUrl: string, workflow: NamedWorkflow | null): { subject: string; text: string } {
  const { error, original_context: context } = body;
  const stackHead = error.stack.split("\n").slice(0, 6).join("\n");
  const stepName = workflow?.steps.find((step) => step.id === error.cellId)?.name;
  const workflowText = workflow ? `"${workflow.name}" (${context.workflow_id})` : context.workflow_id;
  const stepText = stepName ? `"${stepName}" (${error.cellId})` : error.cellId;
  const handle = workflow?.nameSlug ?? context.workflow_id;
  // No quotes in the subject: a quote makes mail programs encode the whole header, unreadable in raw form.
  const subject = cutAtWord(`[Runnel] ${workflow?.name ?? context.workflow_id} failed${stepName ? ` in step ${stepName}` : ""}: ${error.code}: ${error.msg}`, 200);
  const text = [
    `Workflow ${workflowText} failed in step ${stepText} at ${error.ts}.`,
    "",
    `${error.code}: ${error.msg}`,
    "",
    stackHead,
    "",
    `Inspect:  runnel errors ${handle}`,
    `          ${baseUrl}/v1/workflows/${context.workflow_id}/$errors/event_summaries?expand=event`,
    `Replay:   runnel errors replay ${handle} --all`,
    "",
    "You get at most one mail a day per error code and workflow; every error is listed.",
    "Turn these mails off for a workflow with settings.error_notifications = false.",
  ].join("\n");
  return { subject, text };
}

