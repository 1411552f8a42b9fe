import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { classifyTarget } from "../component-code.js";
import { deploySource } from "../deploy-source.js";
import { deployWorkflow, isWorkflowFile, loadWorkflowFile } from "../deploy-workflow.js";
import { printJson, printLines } from "../output.js";
import { collectProp } from "../props.js";
import { openSession } from "../session.js";
import { sourceLines } from "../source-output.js";
import { WorkflowFileError } from "../workflow-file.js";
import { workflowLines } from "../workflow-output.js";
import type { WorkflowView } from "../../client/api-client.js";
import { confirm } from "../prompt.js";
import { withSpinner } from "../spinner.js";

interface DeployOptions {
  name?: string;
  prop?: string[];
  update?: boolean;
  json?: boolean;
}

export function registerDeploy(program: Command, context: CommandContext): void {
  program
    .command("deploy <file|url|key>")
    .description(
      "Deploy a source from a component file (its relative imports travel with it), an http(s) URL of its code, or a registry key (Runnel's catalog, yours: `runnel list registry`); " +
        "or a workflow from a .yaml file (created; a workflow of the same name is updated only with --update or a yes on a terminal; the file's id always updates that workflow)",
    )
    .option("--name <name>", "a name for the deployed source (default: the component's name)")
    .option("--prop <key=value>", "a prop value; repeat for more (JSON when it parses, else text)", collectProp)
    .option("--update", "workflow files: replace the workflow of the same name, without asking")
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      "\nRequired props left out are asked for; without a terminal the deploy fails and names them.\n" +
        "A workflow file whose name a workflow has already updates it only with --update, or a yes on a terminal.\n" +
        'Workflow files: see docs/workflows.md, "Workflow files".',
    )
    .action(async (argument: string, options: DeployOptions, command: Command) => {
      if (isWorkflowFile(argument)) return deployWorkflowFile(context, command, argument, options);
      if (options.update) throw new Error("--update is for workflow files; update a deployed source with `runnel update <source> --code <file>`.");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const source = await deploySource(client, context.io, await classifyTarget(argument), { name: options.name, propFlags: options.prop ?? [], json: options.json });
      if (options.json) return printJson(context.io, source);
      printLines(context.io, [`Deployed ${sourceLines(source).join("\n")}`]);
      const hint = source.endpoint_url
        ? `Send it a request: curl -d '{"hello":"world"}' -H 'content-type: application/json' ${source.endpoint_url}`
        : `Run it now with \`runnel run ${source.name_slug}\`.`;
      context.io.stderr.write(`${hint}\nWatch its events with \`runnel events ${source.name_slug} -f\`.\n`);
    });
}

/** `runnel deploy workflow.yaml`: problems in the file are printed as `file:line: field: message`, one per line. */
async function deployWorkflowFile(context: CommandContext, command: Command, path: string, options: DeployOptions): Promise<void> {
  if (options.name || options.prop) throw new Error("--name and --prop are for sources: a workflow file holds its name and its steps' props.");
  let deployed;
  try {
    // The file first: its problems need no server. Bundling its step files, and the server installing their npm packages, may take a while.
    deployed = await withSpinner(context.io, `Deploying ${path} (npm packages are installed on the server)…`, options, async (spinning) => {
      const loaded = await loadWorkflowFile(path, path);
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const mayReplace = async (existing: WorkflowView) =>
        Boolean(options.update) ||
        spinning.pause(() => confirm(context.io, `A workflow named ${existing.name_slug} exists already (${existing.id}). Replace it with ${path}?`, "--update"));
      return deployWorkflow(client, loaded, mayReplace);
    });
  } catch (error) {
    if (!(error instanceof WorkflowFileError)) throw error;
    context.io.stderr.write(`${error.message}\n`);
    return context.setExitCode(1);
  }
  if (!deployed) {
    context.io.stderr.write("Nothing was deployed. To keep both, give the workflow in the file another name.\n");
    return context.setExitCode(1);
  }
  const { workflow, created, subscribed } = deployed;
  if (options.json) return printJson(context.io, workflow);
  printLines(context.io, [`${created ? "Created" : "Updated"} workflow ${workflowLines(workflow).join("\n")}`]);
  for (const subscription of subscribed) {
    context.io.stdout.write(`Subscribed it to ${subscription.emitter_id} (${subscription.event_name || "default channel"}).\n`);
  }
  const hint = workflow.trigger.endpoint_url
    ? `Send it a request: curl -d '{"hello":"world"}' -H 'content-type: application/json' ${workflow.trigger.endpoint_url}\n`
    : "";
  context.io.stderr.write(`${hint}See its runs with \`runnel runs ${workflow.name_slug}\`, its errors with \`runnel errors ${workflow.name_slug}\`.\n`);
}
