import type { ComponentView, ConfigurableProp } from "../client/api-client.js";
import type { Io } from "./output.js";
import { Prompter } from "./prompt.js";

/** Commander collector for a repeatable `--prop key=value` (no default, so that help shows none). */
export function collectProp(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function configurablePropsOf(component: ComponentView): ConfigurableProp[] {
  return component.configurable_props as unknown as ConfigurableProp[];
}

/** Types whose value the platform provides: never asked for, never sent. */
const PROVIDED = new Set(["$.interface.http", "$.service.db", "app"]);

export function isProvided(prop: ConfigurableProp): boolean {
  return PROVIDED.has(prop.type);
}

/** Props a deploy must be given a value for: required, without a default, not provided by the platform. */
export function needsValue(prop: ConfigurableProp): boolean {
  return !prop.optional && prop.default === undefined && !isProvided(prop);
}

/** `--prop key=value` flags as values by name, each read as its declared type wants. */
export function parsePropFlags(flags: string[], props: ConfigurableProp[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const flag of flags) {
    const equals = flag.indexOf("=");
    if (equals <= 0) throw new Error(`--prop takes key=value, like --prop label=hello; got "${flag}".`);
    const name = flag.slice(0, equals).trim();
    values[name] = parsePropValue(flag.slice(equals + 1), props.find((prop) => prop.name === name));
  }
  return values;
}

/**
 * A value typed by a person: JSON when it parses (numbers, booleans, objects,
 * arrays), else the text. A string prop keeps the text as typed, so that
 * `--prop zip=02134` stays "02134"; a timer takes seconds, JSON or a cron line.
 */
export function parsePropValue(raw: string, prop: ConfigurableProp | undefined): unknown {
  const type = prop?.type;
  if (type === "string" || type === "data_store") return raw;
  // An app prop takes a connected account: `--prop github=apn_…` (runnel accounts list shows yours).
  if (type === "app" && /^apn_[0-9a-z]+$/.test(raw.trim())) return { authProvisionId: raw.trim() };
  if (type === "$.interface.timer") {
    if (/^\s*\d+\s*$/.test(raw)) return { intervalSeconds: Number(raw) };
    const json = parseJson(raw);
    return typeof json === "object" && json !== null ? json : { cron: raw.trim() };
  }
  if (type?.endsWith("[]")) {
    const json = parseJson(raw);
    if (Array.isArray(json)) return json;
    // A comma-separated list, for the hurried: `--prop tags=a,b`.
    const items = raw.split(",").map((item) => item.trim()).filter(Boolean);
    return type === "string[]" ? items : items.map((item) => parseJson(item) ?? item);
  }
  return parseJson(raw) ?? raw;
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Asks for the required props that `given` lacks, one by one. A run without a
 * terminal reads answers from stdin; when it has none, it fails naming the
 * props and how to give them.
 */
export async function askForMissingProps(io: Io, props: ConfigurableProp[], given: Record<string, unknown>): Promise<Record<string, unknown>> {
  const missing = props.filter((prop) => needsValue(prop) && given[prop.name] === undefined);
  if (missing.length === 0) return given;
  const interactive = Boolean(io.stdin.isTTY);
  const values = { ...given };
  const prompter = new Prompter(io.stdin, io.stderr);
  try {
    for (const [index, prop] of missing.entries()) {
      if (interactive) io.stderr.write(describeProp(prop));
      let answer: string;
      try {
        answer = await prompter.ask(`${prop.label ?? prop.name} (${prop.type})`);
        while (interactive && answer === "") answer = await prompter.ask(`${prop.name} is required`);
      } catch {
        if (!interactive) io.stderr.write("\n");
        throw missingPropsError(missing.slice(index));
      }
      if (answer === "") throw missingPropsError(missing.slice(index));
      values[prop.name] = chosenOption(answer, prop) ?? parsePropValue(answer, prop);
    }
  } finally {
    prompter.done();
  }
  return values;
}

/** What a person needs to answer well: the description, the choices. Empty when the question says it all. */
function describeProp(prop: ConfigurableProp): string {
  const lines: string[] = [];
  if (prop.description) lines.push(`${prop.name}: ${prop.description}`);
  if (prop.options) {
    prop.options.forEach((option, index) => lines.push(`  ${index + 1}) ${optionLabel(option)}`));
    lines.push("  (type a number, or the value)");
  } else if (prop.remoteOptions) {
    lines.push(`  ${prop.name} has dynamic options, listed only once a source is deployed: type the value.`);
  }
  return lines.length > 0 ? `${lines.join("\n")}\n` : "";
}

/** A number from the listed options, or an option's label, stands for that option's value. */
function chosenOption(answer: string, prop: ConfigurableProp): unknown {
  const options = prop.options;
  if (!options) return undefined;
  const byNumber = /^\d+$/.test(answer) ? options[Number(answer) - 1] : undefined;
  const option = byNumber ?? options.find((candidate) => typeof candidate === "object" && candidate.label === answer);
  if (option === undefined) return undefined;
  return typeof option === "object" ? option.value : option;
}

function optionLabel(option: NonNullable<ConfigurableProp["options"]>[number]): string {
  return typeof option === "object" ? `${option.label} (${JSON.stringify(option.value)})` : JSON.stringify(option);
}

function missingPropsError(missing: ConfigurableProp[]): Error {
  const names = missing.map((prop) => prop.name);
  const example = missing.map((prop) => `--prop ${prop.name}=…`).join(" ");
  return new Error(
    `Missing required ${names.length === 1 ? "prop" : "props"}: ${names.join(", ")}. Give ${names.length === 1 ? "it" : "them"} with ${example} ` +
      "(values are read as JSON when they parse, else as text), or run in a terminal to be asked.",
  );
}

/**
 * The configured values to send back with an update of props: the server
 * replaces them all, so the ones it shows are kept. Secret values are never
 * shown, so a required secret must be given again.
 */
export function keptProps(current: Record<string, unknown>, props: ConfigurableProp[], given: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const prop of props) {
    if (isProvided(prop) || current[prop.name] === undefined) continue;
    kept[prop.name] = current[prop.name];
  }
  const merged = { ...kept, ...given };
  const lostSecrets = props.filter((prop) => prop.secret && !prop.optional && prop.default === undefined && merged[prop.name] === undefined);
  if (lostSecrets.length > 0) {
    const names = lostSecrets.map((prop) => prop.name);
    throw new Error(
      `Changing props sends them all again, and the server never shows secret values: give ${names.map((name) => `--prop ${name}=…`).join(" ")} too.`,
    );
  }
  return merged;
}
