import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { ApiError, type ApiClient, type SubscriptionView, type WorkflowBody, type WorkflowView } from "../client/api-client.js";
import { slugify } from "../domain/slug.js";
import { bundleFile, isFile } from "./component-code.js";
import { findSourceOrWorkflow } from "./named-target.js";
import { asUpdateBody, parseWorkflowFile, problemOfApiError, withCode, WorkflowFileError, type DeclaredSubscription, type WorkflowFile } from "./workflow-file.js";

/** `.yaml` / `.yml`: what `runnel deploy` reads as a workflow file. */
export function isWorkflowFile(argument: string): boolean {
  return /\.ya?ml$/i.test(argument);
}

/**
 * Reads a workflow file and the code files it names, each bundled with its
 * relative imports as `runnel deploy <file>` bundles a source. Problems are
 * WorkflowFileErrors at their line. `shownAs` is the file's name in messages.
 */
export async function loadWorkflowFile(path: string, shownAs: string): Promise<{ file: WorkflowFile; body: Record<string, unknown> }> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(code === "ENOENT" ? `No such file: ${shownAs}.` : `Cannot read ${shownAs}: ${(error as Error).message}`);
  }
  const file = parseWorkflowFile(text, shownAs);
  let body = file.body;
  for (const ref of file.codeFiles) {
    const codePath = resolve(dirname(path), ref.path);
    const problem = (message: string) => new WorkflowFileError([{ file: shownAs, line: ref.line, field: ref.field, message }]);
    if (!(await isFile(codePath))) throw problem(`no such file: ${ref.path} (looked for ${codePath}; paths are relative to the folder of ${shownAs}).`);
    let bundled;
    try {
      bundled = await bundleFile(codePath);
    } catch (error) {
      throw problem((error as Error).message);
    }
    body = withCode(body, ref, { code: bundled.input.component_code, filename: bundled.input.filename });
  }
  return { file, body };
}

/** The file's workflow has the name of one that exists: whether to replace that one with the file (`--update`, or a yes at a prompt). */
export type MayReplace = (existing: WorkflowView) => Promise<boolean>;

/**
 * Creates the workflow, or updates the one the file pins (`id`: the file says
 * it is that workflow), or the one with the same name slug when `mayReplace`
 * allows it: a name alone never replaces a workflow silently. Null when it
 * did not. A 400 naming a field becomes a WorkflowFileError at that field's line.
 * Then makes the file's `subscriptions` the workflow lacks (`subscribed`: those
 * made now); their emitters are found first, so a wrong one changes nothing.
 */
export async function deployWorkflow(
  client: ApiClient,
  loaded: { file: WorkflowFile; body: Record<string, unknown> },
  mayReplace: MayReplace,
): Promise<{ workflow: WorkflowView; created: boolean; subscribed: SubscriptionView[] } | null> {
  const { file, body } = loaded;
  const emitters = await resolveEmitters(client, file);
  let deployed: { workflow: WorkflowView; created: boolean } | null;
  try {
    deployed = await createOrUpdate(client, file, body, mayReplace);
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) {
      const problem = problemOfApiError(file, error);
      if (problem) throw new WorkflowFileError([problem]);
    }
    if (error instanceof ApiError && error.status === 404 && file.id) {
      throw new WorkflowFileError([{ file: file.file, line: file.locate("id").line, field: "id", message: `no workflow of yours has the id ${file.id}; remove the id to create the workflow.` }]);
    }
    throw error;
  }
  if (!deployed) return null;
  return { ...deployed, subscribed: await subscribeDeclared(client, file, deployed.workflow, emitters) };
}

async function createOrUpdate(client: ApiClient, file: WorkflowFile, body: Record<string, unknown>, mayReplace: MayReplace): Promise<{ workflow: WorkflowView; created: boolean } | null> {
  if (file.id) return { workflow: await client.updateWorkflow(file.id, asUpdateBody(body) as WorkflowBody), created: false };
  const existing = typeof body.name === "string" && body.name.trim() !== "" ? await findByName(client, slugify(body.name)) : null;
  if (existing) {
    if (!(await mayReplace(existing))) return null;
    return { workflow: await client.updateWorkflow(existing.id, asUpdateBody(body) as WorkflowBody), created: false };
  }
  return { workflow: await client.createWorkflow(body as WorkflowBody), created: true };
}

/** Each declared subscription's emitter id: the dc_* / p_* globs as written, ids and names looked up; one not found is a problem at its line. */
async function resolveEmitters(client: ApiClient, file: WorkflowFile): Promise<string[]> {
  const problems = [];
  const ids: string[] = [];
  for (const declared of file.subscriptions) {
    if (declared.emitter === "p_*" || declared.emitter === "dc_*") {
      ids.push(declared.emitter);
      continue;
    }
    try {
      const found = await findSourceOrWorkflow(client, declared.emitter);
      ids.push(found.kind === "source" ? found.source.id : found.workflow.id);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404) && !/Both a source/.test((error as Error).message)) throw error;
      problems.push({ file: file.file, line: declared.line, field: `${declared.field}.emitter`, message: `${(error as Error).message}` });
    }
  }
  if (problems.length > 0) throw new WorkflowFileError(problems);
  return ids;
}

async function subscribeDeclared(client: ApiClient, file: WorkflowFile, workflow: WorkflowView, emitterIds: string[]): Promise<SubscriptionView[]> {
  if (file.subscriptions.length === 0) return [];
  const existing = new Set((await client.listSubscriptions()).filter((s) => s.listener_id === workflow.id).map((s) => `${s.emitter_id} ${s.event_name}`));
  const made: SubscriptionView[] = [];
  for (const [index, declared] of file.subscriptions.entries() as Iterable<[number, DeclaredSubscription]>) {
    const emitterId = emitterIds[index]!;
    if (existing.has(`${emitterId} ${declared.eventName}`)) continue;
    try {
      made.push(await client.subscribe({ emitterId, listenerId: workflow.id, eventName: declared.eventName }));
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 400)) throw error;
      throw new WorkflowFileError([{ file: file.file, line: declared.line, field: declared.field, message: `${error.message} (the workflow itself was deployed: ${workflow.name_slug}, ${workflow.id}).` }]);
    }
    existing.add(`${emitterId} ${declared.eventName}`);
  }
  return made;
}

async function findByName(client: ApiClient, slug: string): Promise<WorkflowView | null> {
  try {
    return await client.getWorkflow(slug);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}
