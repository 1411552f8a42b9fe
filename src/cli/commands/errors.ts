import type { Command } from "commander";
import type { ApiClient, ReplayedView, WorkflowView } from "../../client/api-client.js";
import { parseCount } from "../arguments.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { findWorkflow } from "../named-target.js";
import { printJson, printTable } from "../output.js";
import { openSession } from "../session.js";
import { withSpinner } from "../spinner.js";
import { ERROR_HEAD, errorRow } from "../workflow-output.js";

interface ReplayOptions {
  all?: boolean;
  code?: string;
  step?: string;
  json?: boolean;
}

export function registerErrors(program: Command, context: CommandContext): void {
  const errors = program
    .command("errors")
    .description("`runnel errors <workflow>`: a workflow's recent errors (code, the step that failed, the message); `runnel errors replay` runs them again");

  // A subcommand (the default one) rather than options of `errors` itself, which would take `replay`'s --json.
  errors
    .command("list <workflow>", { isDefault: true })
    .description("A workflow's recent errors, newest first: id, time, code, the step that failed, the message")
    .option("-n, --count <count>", "how many of the latest (1 to 100)", "20")
    .option("--json", "print JSON")
    .action(async (idOrName: string, options: { count: string; json?: boolean }, command: Command) => {
      const limit = parseCount(options.count, "-n");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const workflow = await findWorkflow(client, idOrName);
      const page = await client.listErrors(workflow.id, { limit, expand: true });
      if (options.json) return printJson(context.io, page.data);
      if (page.data.length === 0) return void context.io.stderr.write(`No errors of ${workflow.name_slug}.\n`);
      const stepNames = new Map(workflow.steps.map((step) => [step.id, step.name]));
      printTable(context.io, ERROR_HEAD, page.data.map((error) => errorRow(error, stepNames)));
      context.io.stderr.write(`Run them again with \`runnel errors replay ${workflow.name_slug} <error id>…\` or \`--all\`.\n`);
    });

  errors
    .command("replay <workflow> [error-ids...]")
    .description("Run the workflow again on the original event of each error given, or of every listed error with --all (of one --code or --step)")
    .option("--all", "every listed error")
    .option("--code <code>", "with --all: only errors of this code (UserError, Timeout…)")
    .option("--step <step>", "with --all: only errors of this step (its c_… id or its name)")
    .option("--json", "print JSON")
    .action(async (idOrName: string, errorIds: string[], options: ReplayOptions, command: Command) => {
      if (options.all && errorIds.length > 0) throw new Error("Give error ids or --all, not both.");
      if (!options.all && errorIds.length === 0) throw new Error("Give the ids of the errors to replay (see `runnel errors <workflow>`), or --all.");
      if (!options.all && (options.code || options.step)) throw new Error("--code and --step choose among all errors: use them with --all.");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const workflow = await findWorkflow(client, idOrName);
      const replayed = await withSpinner(context.io, `Replaying errors of ${workflow.name_slug}…`, options, () =>
        options.all ? replayAll(client, workflow, options) : replayEach(client, workflow, errorIds),
      );
      if (options.json) return printJson(context.io, { count: replayed.length, replayed });
      if (replayed.length === 0) return void context.io.stderr.write(`No errors of ${workflow.name_slug} matched: nothing was replayed.\n`);
      for (const item of replayed) context.io.stdout.write(`Replayed ${item.error_id} (event ${item.event_id})\n`);
      const count = replayed.length === 1 ? "1 error" : `${replayed.length} errors`;
      context.io.stderr.write(`${count} of ${workflow.name_slug} will run again; their runs show replay_of: \`runnel runs ${workflow.name_slug}\`.\n`);
    });
}

async function replayEach(client: ApiClient, workflow: WorkflowView, errorIds: string[]): Promise<ReplayedView[]> {
  const replayed: ReplayedView[] = [];
  // One at a time, in the order given, so that their runs come in that order too.
  for (const errorId of errorIds) replayed.push(await client.replayError(workflow.id, errorId));
  return replayed;
}

async function replayAll(client: ApiClient, workflow: WorkflowView, options: ReplayOptions): Promise<ReplayedView[]> {
  let stepId: string | undefined;
  if (options.step) {
    const step = workflow.steps.find((candidate) => candidate.id === options.step || candidate.name === options.step);
    // An id the workflow no longer has may still name old errors: sent as given.
    stepId = step?.id ?? options.step;
  }
  const result = await client.replayErrors(workflow.id, { ...(options.code ? { code: options.code } : {}), ...(stepId ? { stepId } : {}) });
  return result.replayed;
}
