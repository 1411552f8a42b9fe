import { basename } from "node:path";
import { catalogCode } from "../helpers/catalog.js";
import { call, type CallResult, type TestServer } from "../helpers/server.js";

/**
 * Runs catalog actions as a user would: each as the one step of a workflow
 * (saved through the API, so its props pass the same checks as a user's),
 * run by hand with a sample event and waited for (`?wait=true`).
 */

const bundles = new Map<string, Promise<string>>();

/** The code the registry publishes for a catalog file, bundled once per test file. */
export function codeOf(pathInCatalog: string): Promise<string> {
  let code = bundles.get(pathInCatalog);
  if (!code) {
    code = catalogCode(pathInCatalog);
    bundles.set(pathInCatalog, code);
  }
  return code;
}

/** The step of a catalog action with these props; the bundle is CommonJS, so its file name ends in .js. */
export async function catalogStep(pathInCatalog: string, props: Record<string, unknown>, name = "step"): Promise<Record<string, unknown>> {
  return { name, code: await codeOf(pathInCatalog), filename: basename(pathInCatalog).replace(/\.mjs$/, ".js"), props };
}

/** Saves a workflow whose one step is the action; the answer as it came (a refusal is a 400 to look at). */
export async function saveActionWorkflow(server: TestServer, key: string, pathInCatalog: string, props: Record<string, unknown>): Promise<CallResult> {
  return call(server.url, "POST", "/v1/workflows", { key, json: { name: `try ${basename(pathInCatalog)}`, steps: [await catalogStep(pathInCatalog, props)] } });
}

/** Runs a saved workflow once on `event` and answers the finished run. */
export async function runOnce(server: TestServer, key: string, workflowId: string, event: unknown): Promise<any> {
  const ran = await call(server.url, "POST", `/v1/workflows/${workflowId}/runs?wait=true`, { key, json: { event } });
  if (ran.status !== 200) throw new Error(`the run did not finish: ${ran.status} ${JSON.stringify(ran.body).slice(0, 500)}`);
  return ran.body.data;
}

/** Saves the action with `props` (which may read `{{steps.trigger.event.…}}`) and runs it once on `event`: its run. */
export async function runAction(server: TestServer, key: string, pathInCatalog: string, props: Record<string, unknown>, event: unknown = {}): Promise<any> {
  const saved = await saveActionWorkflow(server, key, pathInCatalog, props);
  if (saved.status !== 200) throw new Error(`saving the workflow failed: ${saved.status} ${JSON.stringify(saved.body).slice(0, 500)}`);
  return runOnce(server, key, saved.body.data.id, event);
}
