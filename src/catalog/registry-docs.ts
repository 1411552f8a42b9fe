import { toConfigurableProps, validateComponent, type ConfigurableProp } from "../domain/component-rules.js";
import type { BuiltCatalog, BuiltCatalogComponent } from "./build-catalog.js";

/** The command that writes docs/registry.md; the staleness test names it. */
export const REGISTRY_DOCS_COMMAND = "node scripts/registry-docs.mjs";

/**
 * docs/registry.md: every catalog component with its key, version,
 * description and props, written from the components themselves (their
 * manifests, as users' `configurable_props` show them). The same catalog
 * always renders the same text: no dates, no hashes.
 */
export function renderRegistryDocs(catalog: BuiltCatalog): string {
  const components = [...catalog.components].sort((a, b) => appOf(a).localeCompare(appOf(b)) || a.key.localeCompare(b.key));
  const apps = [...new Set(components.map(appOf))];
  const lines = [
    "# The registry: Runnel's catalog",
    "",
    `<!-- Generated from the components under catalog/ by \`${REGISTRY_DOCS_COMMAND}\`. Do not edit by hand: a test fails when this file is stale. -->`,
    "",
    "Every Runnel installation publishes these components into its registry when it starts (new versions are added; a",
    "published version never changes). Every user sees them beside the components they published themselves, and",
    "nobody can publish over their keys.",
    "",
    "- Deploy a source by its key: `runnel deploy <key>`, `POST /v1/sources` with `{\"key\": \"<key>\"}`, or the",
    "  console's deploy page (`/sources/new?key=<key>`, or the hosted service's `/sources?action=create&key=<key>`).",
    "- Use an action as a workflow step: `{\"name\": \"…\", \"key\": \"<key>\", \"props\": {…}}`.",
    "- Find components: `runnel list registry <words>` (`--app`, `--type`), or",
    "  `GET /v1/components/registry?q=<words>&app=<app>&type=source|action` (paged).",
    "",
    `${components.length} component${components.length === 1 ? "" : "s"} in ${apps.length} app${apps.length === 1 ? "" : "s"}.`,
    "",
    "| Key | Type | Version | Name |",
    "| --- | --- | --- | --- |",
    ...components.map((component) => `| [\`${component.key}\`](#${anchorOf(component.key)}) | ${component.kind} | ${component.version} | ${cell(component.name)} |`),
  ];
  for (const app of apps) {
    lines.push("", `## ${app}`);
    for (const component of components.filter((candidate) => appOf(candidate) === app)) lines.push("", ...renderComponent(component));
  }
  return `${lines.join("\n")}\n`;
}

function renderComponent(component: BuiltCatalogComponent): string[] {
  const props = toConfigurableProps(validateComponent(component.manifest, { asStep: component.kind === "action" }));
  const lines = [`### ${component.key}`, "", `**${cell(component.name)}** (${component.kind}, version ${component.version}) — \`catalog/${component.path}\``, ""];
  lines.push(component.description ? component.description.trim() : "(No description.)", "");
  if (props.length === 0) return [...lines, "No props."];
  lines.push("| Prop | Type | Label | Optional | Default | Description |", "| --- | --- | --- | --- | --- | --- |");
  for (const prop of props) lines.push(propRow(prop));
  return lines;
}

function propRow(prop: ConfigurableProp): string {
  const type = prop.app ? `${prop.type} (${prop.app})` : prop.type;
  const defaultValue = prop.default === undefined ? "" : `\`${cell(JSON.stringify(prop.default))}\``;
  const options = prop.options ? ` Options: ${prop.options.map((option) => `\`${cell(JSON.stringify(typeof option === "object" && option !== null && "value" in option ? option.value : option))}\``).join(", ")}.` : "";
  const description = `${prop.description ?? ""}${prop.secret ? " (Secret: never shown back.)" : ""}${options}`.trim();
  return `| \`${prop.name}\` | \`${type}\` | ${cell(prop.label ?? "")} | ${prop.optional ? "yes" : "no"} | ${defaultValue} | ${cell(description)} |`;
}

/** The app of a key: what comes before its first "-". */
function appOf(component: BuiltCatalogComponent): string {
  return component.key.slice(0, component.key.indexOf("-"));
}

/** GitHub's heading anchor for a key (lower-case; "_" and "-" kept). */
function anchorOf(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9_-]/g, "");
}

/** Text safe inside a Markdown table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n+/g, " ").replace(/\|/g, "\\|").trim();
}
