import { call, type TestServer } from "./server.js";

/** Deploys a source through the API; throws with the error body when it fails. */
export async function deploySource(server: TestServer, key: string, body: Record<string, unknown>): Promise<any> {
  const response = await call(server.url, "POST", "/v1/sources", { key, json: body });
  if (response.status !== 200) throw new Error(`deploy failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/** The events of a source, newest first, with their bodies. */
export async function eventsOf(server: TestServer, key: string, sourceId: string, query = ""): Promise<any[]> {
  const response = await call(server.url, "GET", `/v1/sources/${sourceId}/event_summaries?expand=event&limit=100${query}`, { key });
  if (response.status !== 200) throw new Error(`events failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function logsOf(server: TestServer, key: string, sourceId: string): Promise<string[]> {
  const response = await call(server.url, "GET", `/v1/sources/${sourceId}/logs?limit=100`, { key });
  return response.body.data.map((log: { text: string }) => log.text);
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, what = "the condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
