import { ApiError, type ApiClient, type SourceView, type WorkflowView } from "../client/api-client.js";

/** What `describe`/`delete` were pointed at: a deployed source or a workflow. */
export type NamedTarget = { kind: "source"; source: SourceView } | { kind: "workflow"; workflow: WorkflowView };

/**
 * An id says which it is (`dc_…`, `p_…`); a name slug is looked up among
 * sources and workflows both, and must name only one of them.
 */
export async function findSourceOrWorkflow(client: ApiClient, idOrName: string): Promise<NamedTarget> {
  if (idOrName.startsWith("p_")) return { kind: "workflow", workflow: await client.getWorkflow(idOrName) };
  if (idOrName.startsWith("dc_")) return { kind: "source", source: await client.getSource(idOrName) };
  const [source, workflow] = await Promise.all([orNull(client.getSource(idOrName)), orNull(client.getWorkflow(idOrName))]);
  if (source && workflow) {
    throw new Error(`Both a source (${source.id}) and a workflow (${workflow.id}) are named "${idOrName}": give the id of the one you mean.`);
  }
  if (source) return { kind: "source", source };
  if (workflow) return { kind: "workflow", workflow };
  throw new ApiError(404, "NotFound", `No source or workflow of yours is named "${idOrName}". See them with \`runnel list sources\` and \`runnel list workflows\`.`);
}

/** A workflow by id or name slug, with a message that says how to find one when there is none. */
export async function findWorkflow(client: ApiClient, idOrName: string): Promise<WorkflowView> {
  try {
    return await client.getWorkflow(idOrName);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new ApiError(404, error.code, `No workflow of yours is ${idOrName.startsWith("p_") ? "" : "named "}"${idOrName}". See them with \`runnel list workflows\`.`);
    }
    throw error;
  }
}

async function orNull<T>(pending: Promise<T>): Promise<T | null> {
  try {
    return await pending;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}
