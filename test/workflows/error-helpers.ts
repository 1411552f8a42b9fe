import { call, type TestServer } from "../helpers/server.js";

/** A code step that throws `Error(<message> <body.n>)` (or just the message when the request had no `n`). */
export function throwingStep(message: string): string {
  return `export default defineComponent({ async run({ steps }) { const n = steps.trigger.event?.body?.n; throw new Error(${JSON.stringify(message)} + (n === undefined ? "" : " " + n)); } })`;
}

/** A code step that succeeds and returns what it was sent. */
export const OK_STEP = "export default defineComponent({ async run({ steps }) { return { ok: true, n: steps.trigger.event?.body?.n ?? null }; } })";

/** POSTs JSON to a workflow's HTTP endpoint; the endpoint answers once the event is durable. */
export async function fire(endpointUrl: string, body: unknown = {}, path = ""): Promise<void> {
  const answer = await fetch(`${endpointUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await answer.arrayBuffer();
  if (answer.status !== 200) throw new Error(`the endpoint answered ${answer.status}`);
}

/** Fires one request per body, `chunk` at a time concurrently. */
export async function fireAll(endpointUrl: string, bodies: unknown[], chunk = 25): Promise<void> {
  for (let start = 0; start < bodies.length; start += chunk) {
    await Promise.all(bodies.slice(start, start + chunk).map((body) => fire(endpointUrl, body)));
  }
}

/** How many runs the workflow recorded (the listing's total_count). */
export async function runCount(server: TestServer, key: string, workflowId: string): Promise<number> {
  const listed = await call(server.url, "GET", `/v1/workflows/${workflowId}/runs?limit=1`, { key });
  if (listed.status !== 200) throw new Error(`listing runs failed: ${listed.status} ${JSON.stringify(listed.body)}`);
  return listed.body.page_info.total_count;
}

/** The user's global error workflow, or undefined before its first use. */
export async function errorWorkflowOf(server: TestServer, key: string): Promise<any> {
  const listed = await call(server.url, "GET", "/v1/users/me/workflows?limit=100", { key });
  if (listed.status !== 200) throw new Error(`listing workflows failed: ${listed.status} ${JSON.stringify(listed.body)}`);
  return listed.body.data.find((workflow: any) => workflow.is_error_workflow);
}

/** Lets the worker go round a few more times: to check that something did NOT happen (no timing is asserted). */
export async function settle(ms = 1_200): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Sorted keys: exact-shape comparisons. */
export function keysOf(value: unknown): string[] {
  return Object.keys(value as object).sort();
}

/** Orders `<ms>-<seq>` ids newest first. */
export function newerFirst(a: string, b: string): number {
  const [am, as] = a.split("-").map(Number) as [number, number];
  const [bm, bs] = b.split("-").map(Number) as [number, number];
  return bm - am || bs - as;
}
