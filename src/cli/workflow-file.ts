import { isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar, type Node, type Pair, type YAMLMap } from "yaml";

/**
 * The workflow file (`runnel deploy workflow.yaml`): YAML mirroring the body
 * of POST /v1/workflows, plus `id` (pins the workflow to update), `code_file`
 * on steps and `component_file` on the trigger (read and bundled by the CLI,
 * sent as code). Pure: reading the files it names happens elsewhere
 * (deploy-workflow.ts). Every problem is reported at a line of the file.
 */

/** A field path as the API names it: `steps[1].props.url` → ["steps", 1, "props", "url"]. */
export type FieldPath = Array<string | number>;

/** One problem, at a line (and column, for YAML syntax) of the file. */
export interface FileProblem {
  file: string;
  line: number;
  column?: number | undefined;
  /** The path in the file (`steps[1].props.url`). */
  field?: string | undefined;
  message: string;
  /** More lines under the first (the YAML line with a caret). */
  context?: string[] | undefined;
}

/** A workflow file that cannot be deployed as it is; the message is one `file:line: …` line per problem. */
export class WorkflowFileError extends Error {
  constructor(readonly problems: FileProblem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "WorkflowFileError";
  }
}

/** `workflow.yaml:14: steps[1].props.url: <message>` (with `:column` when known), then any context lines. */
export function formatProblem(problem: FileProblem): string {
  const where = problem.column === undefined ? `${problem.file}:${problem.line}` : `${problem.file}:${problem.line}:${problem.column}`;
  const head = `${where}: ${problem.field ? `${problem.field}: ` : ""}${problem.message}`;
  return [head, ...(problem.context ?? [])].join("\n");
}

/** A file the workflow names by path, relative to the YAML file; the CLI bundles it and sends the code. */
export interface CodeFileRef {
  /** Where the code goes: a step's `code` (with `filename`), or the trigger's `component_code`. */
  target: { kind: "step"; index: number } | { kind: "trigger" };
  /** The path as written in the file. */
  path: string;
  /** Where it is written (`steps[1].code_file`), for messages. */
  field: string;
  line: number;
}

export interface WorkflowFile {
  /** The file's name in messages (as the user gave it). */
  file: string;
  /** `id: p_…` in the file: the workflow to update, whatever its name. */
  id: string | undefined;
  /** The API body, without `id`, `code_file` and `component_file` (see `codeFiles` and `withCode`). */
  body: Record<string, unknown>;
  codeFiles: CodeFileRef[];
  /** `subscriptions:` in the file: what the workflow runs on besides its trigger, made on every deploy (never removed by one). */
  subscriptions: DeclaredSubscription[];
  /**
   * Where a field the API named is in the file: its line (a map member's key,
   * a list item's first line), or its nearest ancestor's when the file does not
   * have it. `steps[1].code` of a `code_file` step is its `code_file` line.
   * `codeLine` (a line inside inline code, from a syntax error) moves into a
   * `|` block.
   */
  locate(field: string, codeLine?: number): { line: number; field: string };
}

/** One item of `subscriptions:`: an emitter (a source or workflow, by id or name, or dc_* / p_*), and a channel ("" the default). */
export interface DeclaredSubscription {
  emitter: string;
  eventName: string;
  line: number;
  field: string;
}

const TOP_KEYS = ["id", "name", "trigger", "steps", "respond", "settings", "active", "subscriptions"] as const;
const SUBSCRIPTION_KEYS = ["emitter", "event_name"] as const;
const TRIGGER_KEYS = ["type", "intervalSeconds", "cron", "timezone", "source_id", "component_file", "component_code", "component_url", "key", "configured_props"] as const;
const STEP_KEYS = ["name", "code", "code_file", "filename", "key", "props", "retries"] as const;
const SETTINGS_KEYS = ["error_notifications", "error_retention", "retries", "errors_on_each_attempt", "concurrency", "concurrency_key", "rate_limit"] as const;

/** The API's field for code the file gives by path: errors about the code point at the path's line. */
const FILE_ALIASES: Readonly<Record<string, string>> = { code: "code_file", filename: "code_file", component_code: "component_file" };

/** Parses a workflow file; throws WorkflowFileError for YAML syntax, unknown keys and code given twice. */
export function parseWorkflowFile(text: string, file: string): WorkflowFile {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, keepSourceTokens: false });
  const lines = text.split(/\r?\n/);
  const [error] = doc.errors;
  if (error) {
    // The first only: the parser's later errors mostly follow from it.
    const { line, col } = lineCounter.linePos(error.pos[0]);
    const source = lines[line - 1];
    const context = source === undefined || source.trim() === "" ? [] : [`  ${source}`, `  ${" ".repeat(Math.max(0, col - 1))}^`];
    throw new WorkflowFileError([{ file, line, column: col, message: `YAML syntax: ${firstSentence(error.message)}`, context }]);
  }
  const lineAt = (offset: number) => lineCounter.linePos(offset).line;
  const lineOf = (node: unknown): number => {
    const range = (node as Node | null)?.range;
    return range ? lineAt(range[0]) : 1;
  };
  const root = doc.contents;
  if (!isMap(root)) {
    const what = root === null ? "The file is empty" : "The file is not a mapping of keys";
    throw new WorkflowFileError([{ file, line: lineOf(root), message: `${what}: a workflow file has name, trigger and steps (see docs/workflows.md, "Workflow files").` }]);
  }

  const problems: FileProblem[] = [];
  const codeFiles: CodeFileRef[] = [];
  const pairLine = (pair: Pair) => lineOf(pair.key ?? pair.value);
  checkKeys(root, TOP_KEYS, "the workflow", "", problems, file, pairLine);
  const trigger = findPair(root, "trigger");
  if (trigger && isMap(trigger.value)) {
    checkKeys(trigger.value, TRIGGER_KEYS, "the trigger", "trigger.", problems, file, pairLine);
    const ref = codeFileOf(trigger.value, "component_file", "component_code", "trigger", { kind: "trigger" }, problems, file, pairLine);
    if (ref) codeFiles.push(ref);
  }
  const settings = findPair(root, "settings");
  if (settings && isMap(settings.value)) checkKeys(settings.value, SETTINGS_KEYS, "settings", "settings.", problems, file, pairLine);
  const steps = findPair(root, "steps");
  if (steps && isSeq(steps.value)) {
    steps.value.items.forEach((item, index) => {
      if (!isMap(item)) return; // the server says what a step must be, at this item's line
      const prefix = `steps[${index}]`;
      checkKeys(item, STEP_KEYS, `a step`, `${prefix}.`, problems, file, pairLine);
      const ref = codeFileOf(item, "code_file", "code", prefix, { kind: "step", index }, problems, file, pairLine);
      if (ref) codeFiles.push(ref);
    });
  }
  const subscriptions: DeclaredSubscription[] = [];
  const declared = findPair(root, "subscriptions");
  if (declared) {
    const shape = "subscriptions must be a list of {emitter: <source or workflow id or name>, event_name: <channel, optional>}.";
    if (!isSeq(declared.value)) problems.push({ file, line: pairLine(declared), field: "subscriptions", message: shape });
    else {
      declared.value.items.forEach((item, index) => {
        const field = `subscriptions[${index}]`;
        if (!isMap(item)) return void problems.push({ file, line: lineOf(item), field, message: shape });
        checkKeys(item, SUBSCRIPTION_KEYS, "a subscription", `${field}.`, problems, file, pairLine);
        const emitter = findPair(item, "emitter");
        const eventName = findPair(item, "event_name");
        const text = (pair: Pair | undefined) => (pair && isScalar(pair.value) && typeof pair.value.value === "string" ? pair.value.value.trim() : null);
        if (!text(emitter)) return void problems.push({ file, line: lineOf(item), field: `${field}.emitter`, message: "a subscription needs emitter: the id or name of a source or workflow of yours." });
        if (eventName && text(eventName) === null) return void problems.push({ file, line: pairLine(eventName), field: `${field}.event_name`, message: "event_name must be a channel's name, such as $errors; leave it out for the default channel." });
        subscriptions.push({ emitter: text(emitter)!, eventName: text(eventName) ?? "", line: lineOf(item), field });
      });
    }
  }
  const id = findPair(root, "id");
  if (id && !(isScalar(id.value) && typeof id.value.value === "string" && id.value.value.startsWith("p_"))) {
    problems.push({ file, line: pairLine(id), field: "id", message: "id must be a workflow's id (p_…), the one to update; leave it out to create the workflow or update the one with the same name." });
  }
  if (problems.length > 0) throw new WorkflowFileError(problems);

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new WorkflowFileError([{ file, line: 1, message: `The YAML cannot be read: ${(error as Error).message}` }]);
  }
  const { id: pinned, subscriptions: _subscriptions, ...rest } = data as Record<string, unknown>;
  const body = stripCodeFiles(rest);

  return {
    file,
    id: typeof pinned === "string" ? pinned : undefined,
    body,
    codeFiles,
    subscriptions,
    locate(field, codeLine) {
      const path = parseFieldPath(field);
      let node: unknown = root;
      let line = lineOf(root);
      const found: FieldPath = [];
      for (const segment of path) {
        if (isMap(node)) {
          let name = String(segment);
          let pair = findPair(node, name);
          const alias = FILE_ALIASES[name];
          if (!pair && alias) {
            pair = findPair(node, alias);
            if (pair) name = alias;
          }
          if (!pair) break;
          found.push(name);
          line = pairLine(pair);
          node = pair.value;
        } else if (isSeq(node) && typeof segment === "number" && node.items[segment]) {
          node = node.items[segment];
          found.push(segment);
          line = lineOf(node);
        } else break;
      }
      const complete = found.length === path.length;
      if (complete && codeLine !== undefined && Number.isInteger(codeLine) && codeLine > 0 && isScalar(node) && node.type === Scalar.BLOCK_LITERAL) {
        // A `|` block's text starts on the line after its header, line for line.
        line = lineOf(node) + codeLine;
      }
      return { line, field: formatFieldPath([...found, ...path.slice(found.length)]) };
    },
  };
}

/** The problem a refused request names, at its line in the file; null when the error names no field. */
export function problemOfApiError(workflow: WorkflowFile, error: { message: string; details?: Record<string, unknown> | undefined }): FileProblem | null {
  const field = error.details?.field;
  if (typeof field !== "string" || field === "") return null;
  const codeLine = typeof error.details?.line === "number" ? error.details.line : undefined;
  const at = workflow.locate(field, codeLine);
  return { file: workflow.file, line: at.line, field: at.field, message: error.message };
}

/** The body with a code file's bundle in its place: a step's `code` and `filename`, or the trigger's `component_code`. */
export function withCode(body: Record<string, unknown>, ref: CodeFileRef, code: { code: string; filename: string }): Record<string, unknown> {
  if (ref.target.kind === "trigger") {
    return { ...body, trigger: { ...(body.trigger as Record<string, unknown>), component_code: code.code } };
  }
  const index = ref.target.index;
  const steps = (body.steps as unknown[]).map((step, i) => (i === index ? { ...(step as Record<string, unknown>), code: code.code, filename: code.filename } : step));
  return { ...body, steps };
}

/**
 * The body of a redeploy: the file is the whole truth, so `respond` and
 * `settings` left out go back to their defaults (PUT alone would keep the
 * current values). `active` and `trigger` left out stay as they are.
 */
export function asUpdateBody(body: Record<string, unknown>): Record<string, unknown> {
  const settings = isRecord(body.settings) ? body.settings : {};
  return { ...body, respond: body.respond ?? "immediately", settings: { error_notifications: true, error_retention: 100, ...settings } };
}

/** `steps[1].props.url` or `steps.1.props.url` (the schema's form) → ["steps", 1, "props", "url"]. */
export function parseFieldPath(field: string): FieldPath {
  const path: FieldPath = [];
  for (const part of field.split(".")) {
    const match = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!match) {
      path.push(part);
      continue;
    }
    const [, name = "", indexes = ""] = match;
    if (name !== "") path.push(/^\d+$/.test(name) ? Number(name) : name);
    for (const index of indexes.matchAll(/\[(\d+)\]/g)) path.push(Number(index[1]));
  }
  return path;
}

/** ["steps", 1, "props", "url"] → `steps[1].props.url`. */
export function formatFieldPath(path: FieldPath): string {
  return path.reduce<string>((text, segment) => (typeof segment === "number" ? `${text}[${segment}]` : text === "" ? segment : `${text}.${segment}`), "");
}

function findPair(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((pair) => (isScalar(pair.key) ? String(pair.key.value) : String(pair.key)) === key);
}

function keyName(pair: Pair): string {
  return isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
}

function checkKeys(map: YAMLMap, known: readonly string[], what: string, prefix: string, problems: FileProblem[], file: string, pairLine: (pair: Pair) => number): void {
  for (const pair of map.items) {
    const name = keyName(pair);
    if (known.includes(name)) continue;
    const close = known.find((candidate) => closeTo(candidate, name));
    problems.push({
      file,
      line: pairLine(pair),
      field: `${prefix}${name}`,
      message: `not a key of ${what}${close ? `; did you mean ${close}?` : ""} (known: ${known.join(", ")}).`,
    });
  }
}

/** A `code_file`/`component_file` member: a path, and not given beside inline code. */
function codeFileOf(
  map: YAMLMap,
  fileKey: string,
  codeKey: string,
  prefix: string,
  target: CodeFileRef["target"],
  problems: FileProblem[],
  file: string,
  pairLine: (pair: Pair) => number,
): CodeFileRef | null {
  const pair = findPair(map, fileKey);
  if (!pair) return null;
  const field = `${prefix}.${fileKey}`;
  if (findPair(map, codeKey)) {
    problems.push({ file, line: pairLine(pair), field, message: `give ${codeKey} or ${fileKey}, not both.` });
    return null;
  }
  const value = isScalar(pair.value) ? pair.value.value : undefined;
  if (typeof value !== "string" || value.trim() === "") {
    problems.push({ file, line: pairLine(pair), field, message: `${fileKey} must be a path to a code file, relative to this file (like ./steps/fetch.ts).` });
    return null;
  }
  return { target, path: value, field, line: pairLine(pair) };
}

/** The body without the file-only keys, whose code is put in by `withCode`. */
function stripCodeFiles(data: Record<string, unknown>): Record<string, unknown> {
  const body = { ...data };
  if (isRecord(body.trigger) && "component_file" in body.trigger) {
    const { component_file: _file, ...trigger } = body.trigger;
    body.trigger = trigger;
  }
  if (Array.isArray(body.steps)) {
    body.steps = body.steps.map((step: unknown) => {
      if (!isRecord(step) || !("code_file" in step)) return step;
      const { code_file: _file, ...rest } = step;
      return rest;
    });
  }
  return body;
}

/** One edit apart (a typo), for "did you mean". */
function closeTo(known: string, given: string): boolean {
  const a = known.toLowerCase();
  const b = given.toLowerCase();
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  // Two neighbours swapped.
  for (let i = 0; i + 1 < a.length; i++) {
    if (a.length === b.length && a[i] !== b[i]) {
      if (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2)) return true;
      break;
    }
  }
  let i = 0;
  let j = 0;
  let edits = 0;
  while (i < a.length || j < b.length) {
    if (a[i] === b[j]) {
      i++;
      j++;
      continue;
    }
    if (++edits > 1) return false;
    if (a.length > b.length) i++;
    else if (b.length > a.length) j++;
    else {
      i++;
      j++;
    }
  }
  return true;
}

/** yaml's messages can run on over several lines; the first says what is wrong. */
function firstSentence(message: string): string {
  return message.split("\n")[0]!.trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
