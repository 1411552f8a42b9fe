import type { Command } from "commander";
import type { ApiClient, SourceView, WorkflowView } from "../../client/api-client.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { cutAtWord } from "../../domain/error-text.js";
import { formatTime, printJson, printTable } from "../output.js";
import { openSession } from "../session.js";
import { triggerOf } from "../source-output.js";

const KINDS = ["sources", "components", "workflows", "actions", "registry"] as const;

export function registerList(program: Command, context: CommandContext): void {
  program
    .command("list <sources|components|workflows|actions|registry> [search...]")
    .alias("ls")
    .description(
      "List your deployed sources, the components behind them, your workflows, the actions you published (with their versions), " +
        "or the registry: Runnel's catalog and what you published, searched by words (`runnel list registry new request`)",
    )
    .option("--app <app>", "registry: only this app's components (and the app itself), like http or schedule")
    .option("--type <source|action|app>", "registry: only sources, only actions, or only app files")
    .option("--json", "print JSON")
    .action(async (kind: string, search: string[], options: RegistryListOptions, command: Command) => {
      if (!(KINDS as readonly string[]).includes(kind)) {
        throw new Error(`Nothing called "${kind}" to list: try \`runnel list sources\`, \`runnel list components\`, \`runnel list workflows\` or \`runnel list registry\`.`);
      }
      if (kind !== "registry" && (search.length > 0 || options.app || options.type)) {
        throw new Error(`Search words, --app and --type are for \`runnel list registry\`; \`runnel list ${kind}\` takes none.`);
      }
      if (options.type !== undefined && options.type !== "source" && options.type !== "action" && options.type !== "app") {
        throw new Error(`--type is source, action or app; got "${options.type}".`);
      }
      const { client } = await openSession(context.env, globalOptions(command).profile);
      if (kind === "registry") return listRegistry(client, context, search.join(" "), options);
      if (kind === "workflows") return listWorkflows(client, context, Boolean(options.json));
      if (kind === "actions") return listActions(client, context, Boolean(options.json));
      const sources = await allSources(client);
      if (kind === "sources") {
        if (options.json) return printJson(context.io, sources);
        if (sources.length === 0) return void context.io.stderr.write("No sources yet. Deploy one with `runnel deploy <file>`.\n");
        printTable(
          context.io,
          ["id", "name", "active", "trigger", "trigger of workflow", "updated"],
          sources.map((source) => [
            source.id,
            source.name_slug,
            source.active ? "yes" : "no",
            triggerOf(source),
            // A workflow's own trigger is listed with it named: it is changed and deleted through that workflow.
            source.owned_by_workflow?.name_slug ?? "-",
            formatTime(source.updated_at),
          ]),
        );
        return;
      }
      await listComponents(client, context, sources, Boolean(options.json));
    });
}

/** Every page of the user's sources, newest first. */
async function allSources(client: ApiClient): Promise<SourceView[]> {
  const sources: SourceView[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await client.listSources({ limit: 100, ...(after ? { after } : {}) });
    sources.push(...page.data);
    if (page.data.length < 100 || !page.page_info.end_cursor) return sources;
    after = page.page_info.end_cursor;
  }
}

async function listWorkflows(client: ApiClient, context: CommandContext, json: boolean): Promise<void> {
  const workflows: WorkflowView[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await client.listWorkflows({ limit: 100, ...(after ? { after } : {}) });
    workflows.push(...page.data);
    if (page.data.length < 100 || !page.page_info.end_cursor) break;
    after = page.page_info.end_cursor;
  }
  if (json) return printJson(context.io, workflows);
  if (workflows.length === 0) return void context.io.stderr.write("No workflows yet. Deploy one with `runnel deploy workflow.yaml`.\n");
  printTable(
    context.io,
    ["id", "name", "trigger", "active", "steps"],
    workflows.map((workflow) => [workflow.id, workflow.name_slug, workflow.trigger.type, workflow.active ? "yes" : "no", String(workflow.steps.length)]),
  );
}

/** The API has no list of saved components yet: this lists those your sources run, each once. */
async function listComponents(client: ApiClient, context: CommandContext, sources: SourceView[], json: boolean): Promise<void> {
  const usedBy = new Map<string, string[]>();
  for (const source of sources) usedBy.set(source.component_id, [...(usedBy.get(source.component_id) ?? []), source.name_slug]);
  const components = await Promise.all([...usedBy.keys()].map((id) => client.getComponent(id)));
  context.io.stderr.write("Components behind your deployed sources (saved components no source uses are not listed).\n");
  if (json) {
    return printJson(
      context.io,
      components.map(({ code: _code, ...component }) => ({ ...component, sources: usedBy.get(component.id) ?? [] })),
    );
  }
  if (components.length === 0) return void context.io.stderr.write("None yet. Deploy a source with `runnel deploy <file>`.\n");
  printTable(
    context.io,
    ["id", "name", "version", "key", "sources"],
    components.map((component) => [component.id, component.name, component.version, component.key ?? "-", (usedBy.get(component.id) ?? []).join(", ")]),
  );
}

/** The actions in your registry: one row per key, its newest version first, then the others. */
async function listActions(client: ApiClient, context: CommandContext, json: boolean): Promise<void> {
  const actions = (await client.listPublished()).filter((entry) => entry.kind === "action");
  if (json) return printJson(context.io, actions);
  if (actions.length === 0) return void context.io.stderr.write("No published actions yet. Publish one with `runnel publish <file>`.\n");
  const byKey = new Map<string, typeof actions>();
  for (const entry of actions) byKey.set(entry.key, [...(byKey.get(entry.key) ?? []), entry]);
  printTable(
    context.io,
    ["key", "latest", "published", "other versions"],
    [...byKey.entries()].map(([key, versions]) => [key, versions[0]!.version, formatTime(versions[0]!.published_at), versions.slice(1).map((entry) => entry.version).join(", ") || "-"]),
  );
  context.io.stderr.write("Use one in a workflow step with `key: <key>` (its latest release).\n");
}

interface RegistryListOptions {
  app?: string;
  type?: string;
  json?: boolean;
}

/** The registry: one row per key (its newest version), Runnel's catalog and your own keys, filtered by words, app and type. */
async function listRegistry(client: ApiClient, context: CommandContext, words: string, options: RegistryListOptions): Promise<void> {
  const type = options.type === "source" || options.type === "action" || options.type === "app" ? options.type : undefined;
  const listings = await client.listAllRegistry({ q: words.trim() || undefined, app: options.app, type });
  if (options.json) return printJson(context.io, listings);
  if (listings.length === 0) {
    const filters = [words.trim() ? `"${words.trim()}"` : null, options.app ? `app ${options.app}` : null, type ? `type ${type}` : null].filter(Boolean).join(", ");
    return void context.io.stderr.write(`Nothing in the registry matches ${filters || "(no filter)"}. Try fewer words, or \`runnel list registry\` for everything.\n`);
  }
  printTable(
    context.io,
    ["key", "type", "version", "description"],
    listings.map((listing) => [listing.key, listing.type, listing.version, cutAtWord(listing.description ?? "-", 70)]),
  );
  const hasApps = listings.some((listing) => listing.type === "app");
  context.io.stderr.write(
    `Deploy a source with \`runnel deploy <key>\`; use an action in a workflow step with \`key: <key>\`.${hasApps ? ' An app is used by components through an app prop ({ type: "app", app: "<key>" }), not deployed.' : ""}\n`,
  );
}
