import type { Command } from "commander";
import type { ApiClient, NotReplayedView, ReplayChoiceBody, ReplayedView, WorkflowView } from "../../client/api-client.js";
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
  from?: string;
  withCode?: string;
  json?: boolean;
}

/** `--from` and `--with-code` as the API spells them; a value neither names is refused before anything is sent. */
function replayChoice(options: ReplayOptions): ReplayChoiceBody {
  const choice: ReplayChoiceBody = {};
  if (options.from !== undefined) {
    if (options.from !== "trigger" && options.from !== "failed-step") throw new Error(`--from must be trigger (the whole workflow again, the default) or failed-step (start at the step that failed); got "${options.from}".`);
    choice.from = options.from === "failed-step" ? "failed_step" : "trigger";
  }
  if (options.withCode !== undefined) {
    if (options.withCode !== "current" && options.withCode !== "failed-run") throw new Error(`--with-code must be current (the workflow as it is now, the default) or failed-run (the code the failed run ran); got "${options.withCode}".`);
    choice.with_code = options.withCode === "failed-run" ? "failed_run" : "current";
  }
  return choice;
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
    .description("Run the workflow again on the original event of each error given, or of every listed error with --all (of one --code or --step); --from failed-step starts each at the step that failed")
    .option("--all", "every listed error")
    .option("--code <code>", "with --all: only errors of this code (UserError, Timeout…)")
    .option("--step <step>", "with --all: only errors of this step (its c_… id or its name)")
    .option("--from <where>", "trigger (the whole workflow again, the default) or failed-step (start at the step that failed, reusing the results of the steps before it: they do not run again)")
    .option("--with-code <code>", "current (the workflow as it is now, the default) or failed-run (the version of the code the failed run ran)")
    .option("--json", "print JSON")
    .action(async (idOrName: string, errorIds: string[], options: ReplayOptions, command: Command) => {
      if (options.all && errorIds.length > 0) throw new Error("Give error ids or --all, not both.");
      if (!options.all && errorIds.length === 0) throw new Error("Give the ids of the errors to replay (see `runnel errors <workflow>`), or --all.");
      if (!options.all && (options.code || options.step)) throw new Error("--code and --step choose among all errors: use them with --all.");
      const choice = replayChoice(options);
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const workflow = await findWorkflow(client, idOrName);
      const { replayed, notReplayed } = await withSpinner(context.io, `Replaying errors of ${workflow.name_slug}…`, options, () =>
        options.all ? replayAll(client, workflow, options, choice) : replayEach(client, workflow, errorIds, choice),
      );
      if (options.json) return printJson(context.io, { count: replayed.length, replayed, not_replayed: notReplayed });
      for (const item of notReplayed) context.io.stderr.write(`Not replayed ${item.error_id}: ${item.reason}\n`);
      if (replayed.length === 0) return void context.io.stderr.write(notReplayed.length > 0 ? "Nothing was replayed.\n" : `No errors of ${workflow.name_slug} matched: nothing was replayed.\n`);
      const from = choice.from === "failed_step" ? " from its failed step" : "";
      for (const item of replayed) context.io.stdout.write(`Replayed ${item.error_id}${from} (event ${item.event_id})\n`);
      const count = replayed.length === 1 ? "1 error" : `${replayed.length} errors`;
      context.io.stderr.write(`${count} of ${workflow.name_slug} will run again; their runs show replay_of: \`runnel runs ${workflow.name_slug}\`.\n`);
    });
}

async function replayEach(client: ApiClient, workflow: WorkflowView, errorIds: string[], choice: ReplayChoiceBody): Promise<{ replayed: ReplayedView[]; notReplayed: NotReplayedView[] }> {
  const replayed: ReplayedView[] = [];
  // One at a time, in the order given, so that their runs come in that order too.
  for (const errorId of errorIds) replayed.push(await client.replayError(workflow.id, errorId, choice));
  return { replayed, notReplayed: [] };
}

async function replayAll(client: ApiClient, workflow: WorkflowView, options: ReplayOptions, choice: ReplayChoiceBody): Promise<{ replayed: ReplayedView[]; notReplayed: NotReplayedView[] }> {
  let stepId: string | undefined;
  if (options.step) {
    const step = workflow.steps.find((candidate) => candidate.id === options.step || candidate.name === options.step);
    // An id the workflow no longer has may still name old errors: sent as given.
    stepId = step?.id ?? options.step;
  }
  const result = await client.replayErrors(workflow.id, { ...(options.code ? { code: options.code } : {}), ...(stepId ? { stepId } : {}), ...choice });
  return { replayed: result.replayed, notReplayed: result.not_replayed ?? [] };
}
