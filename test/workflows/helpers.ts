import { call, type TestServer } from "../helpers/server.js";

/** Creates a workflow through the API; fails the test with the server's answer when it is refused. */
export async function createWorkflow(server: TestServer, key: string, body: Record<string, unknown>): Promise<any> {
  const created = await call(server.url, "POST", "/v1/workflows", { key, json: body });
  if (created.status !== 200) throw new Error(`creating the workflow failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.data;
}

/** Polls `read` until `done` says yes (runs are recorded by a worker, after the request that triggered them). */
export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() > until) throw new Error(`Timed out waiting for ${what}; last seen: ${JSON.stringify(last).slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The workflow's runs, newest first. */
export async function runsOf(server: TestServer, key: string, workflowId: string, limit = 100): Promise<any[]> {
  const listed = await call(server.url, "GET", `/v1/workflows/${workflowId}/runs?limit=${limit}`, { key });
  if (listed.status !== 200) throw new Error(`listing runs failed: ${listed.status} ${JSON.stringify(listed.body)}`);
  return listed.body.data;
}

/** The workflow's errors, newest first, with their events. */
export async function errorsOf(server: TestServer, key: string, workflowId: string, query = "expand=event&limit=100"): Promise<any> {
  const listed = await call(server.url, "GET", `/v1/workflows/${workflowId}/$errors/event_summaries?${query}`, { key });
  if (listed.status !== 200) throw new Error(`listing errors failed: ${listed.status} ${JSON.stringify(listed.body)}`);
  return listed.body;
}
