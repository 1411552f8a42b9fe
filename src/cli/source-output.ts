import type { ComponentView, ConfigurableProp, EventSummaryView, LogView, SourceView } from "../client/api-client.js";
import { formatTime, type Io } from "./output.js";
import { isProvided } from "./props.js";

/** How a source is triggered, in a few words: its endpoint URL, its schedule, or "-". */
export function triggerOf(source: SourceView): string {
  if (source.endpoint_url) return source.endpoint_url;
  const timer = Object.values(source.configured_props).find(isTimerEcho);
  if (timer) return timer.cron ? `cron ${timer.cron}${timer.timezone ? ` (${timer.timezone})` : ""}` : `every ${timer.interval_seconds} s`;
  return "-";
}

/** A configured timer as the API shows it: `{cron, interval_seconds}`, and `timezone` when the cron has one. */
function isTimerEcho(value: unknown): value is { cron: string | null; interval_seconds: number | null; timezone?: string } {
  if (typeof value !== "object" || value === null || !("cron" in value) || !("interval_seconds" in value)) return false;
  return Object.keys(value).length === ("timezone" in value ? 3 : 2);
}

function isEndpointEcho(value: unknown): boolean {
  return typeof value === "object" && value !== null && "endpoint_url" in value && Object.keys(value).length === 1;
}

/** The configured values a person set: the endpoint and schedule are shown on their own lines. */
function userProps(source: SourceView): Array<[string, unknown]> {
  return Object.entries(source.configured_props).filter(([, value]) => !isTimerEcho(value) && !isEndpointEcho(value));
}

/** A source as a short block: the first line names it, then one field per line. */
export function sourceLines(source: SourceView, options: { component?: boolean } = {}): string[] {
  const lines = [
    `${source.name_slug} (${source.id})`,
    `  name:      ${source.name}`,
    `  active:    ${source.active ? "yes" : `no (triggers do not run it; \`runnel update ${source.name_slug} --activate\` turns it on)`}`,
  ];
  const workflow = source.owned_by_workflow;
  if (workflow) lines.push(`  trigger of workflow ${workflow.name_slug} (${workflow.id}): it changes and goes with that workflow`);
  if (source.endpoint_url) lines.push(`  endpoint:  ${source.endpoint_url}`);
  const trigger = triggerOf(source);
  if (!source.endpoint_url && trigger !== "-") lines.push(`  timer:     ${trigger}`);
  for (const [name, value] of userProps(source)) lines.push(`  prop:      ${name} = ${JSON.stringify(value)}`);
  if (options.component !== false) lines.push(`  component: ${source.component_key ?? source.component_id}`);
  lines.push(`  updated:   ${formatTime(source.updated_at)}`);
  return lines;
}

/** The component part of `describe`: what it is and every prop it declares, with the configured value. */
export function componentLines(component: ComponentView, props: ConfigurableProp[], source: SourceView): string[] {
  const lines = [
    `component: ${component.name} ${component.version} (${component.id}${component.key ? `, key ${component.key}` : ""})`,
  ];
  if (component.description) lines.push(`  ${component.description}`);
  if (props.length === 0) return [...lines, "props:     none"];
  lines.push("props:");
  for (const prop of props) {
    const flags = [prop.type, prop.optional ? "optional" : null, prop.secret ? "secret" : null, prop.remoteOptions ? "dynamic options" : null].filter(Boolean);
    const value = source.configured_props[prop.name];
    const shown = isProvided(prop) ? "" : ` = ${prop.secret ? "(secret, not shown)" : value === undefined ? "-" : JSON.stringify(value)}`;
    lines.push(`  ${prop.name} [${flags.join(", ")}]${shown}${prop.label ? `  (${prop.label})` : ""}`);
  }
  return lines;
}

/** An emitted event: a header line (time, id, channel, summary), then its body as one line of JSON. */
export function printEvent(io: Io, event: EventSummaryView, prefix = ""): void {
  const channel = event.metadata.name ? ` [${event.metadata.name}]` : "";
  const summary = event.metadata.summary ? `  ${event.metadata.summary}` : "";
  const body = event.event === undefined ? "(body over 1 KB left out)" : JSON.stringify(event.event);
  io.stdout.write(`${prefix}${new Date(event.indexed_at_ms).toISOString()}  ${event.id}${channel}${summary}\n${prefix}  ${body}\n`);
}

export function printLog(io: Io, log: LogView, prefix = ""): void {
  const mark = log.stream === "stdout" ? "" : ` ${log.stream}`;
  io.stdout.write(`${prefix}${new Date(log.ts).toISOString()}${mark}  ${log.text.replace(/\n/g, `\n${prefix}  `)}\n`);
}
