/**
 * The hostile suite's harness: a real server with an attacker and a
 * bystander, and a way to check that the bystander is served while an
 * attack runs. Each file of test/hostile/ is one theme of attack:
 *
 * | file | attacks |
 * |---|---|
 * | network.test.ts | the API port, PostgreSQL, Redis, a fake database on loopback, cloud metadata, private networks, redirects inward, `$.send.http` inward |
 * | wire.test.ts | writing to the runner's channel (descriptor 3): floods, garbage, forged frames, closing it; stdout floods; as a source and as a workflow step |
 * | containment.test.ts | environment, files, processes, signals, workers, addons, loops, heap, exit, huge emits, log floods, prototype tricks |
 * | resources.test.ts | memory outside the heap (Buffers), the admin's ceilings on memory and time |
 * | ingest.test.ts | deep JSON bodies sent to endpoints among good requests |
 *
 * Tests that need test hosts use test/helpers/netns.ts.
 */
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";

export interface HostileServer {
  server: TestServer;
  attacker: { id: string; key: string };
  bystander: { id: string; key: string };
  /** The bystander's HTTP source: answers `still here <n>` to `?n=<n>`. */
  bystanderEndpoint: string;
  close(): Promise<void>;
}

const BYSTANDER_SOURCE = `module.exports = { name: "bystander", version: "0.1.0", props: { http: { type: "$.interface.http", customResponse: true } }, async run(event) { this.http.respond({ status: 200, body: "still here " + event.query.n }); } };`;

/** A real server with two users; the bystander has an HTTP source of its own. */
export async function startHostileServer(env: Record<string, string> = {}): Promise<HostileServer> {
  const server = await startTestServer(env);
  const attacker = await createUser(server, "attacker");
  const bystander = await createUser(server, "bystander");
  const source = await deploySource(server, bystander.key, { component_code: BYSTANDER_SOURCE });
  return { server, attacker, bystander, bystanderEndpoint: source.endpoint_url, close: () => server.close() };
}

export interface BystanderAnswers<T> {
  result: T;
  answers: Array<{ status: number; body: string }>;
}

/**
 * Hits the bystander's endpoint in a steady, bounded stream (one request at
 * a time, at most 500) until `attack` settles, and returns what the attack
 * gave and every answer the bystander got. Assert with `expectServed`.
 */
export async function whileAttacking<T>(bystanderEndpoint: string, attack: Promise<T>): Promise<BystanderAnswers<T>> {
  const answers: Array<{ status: number; body: string }> = [];
  let done = false;
  const load = (async () => {
    for (let n = 0; n < 500 && (!done || answers.length === 0); n++) {
      try {
        const response = await fetch(`${bystanderEndpoint}?n=${n}`);
        answers.push({ status: response.status, body: await response.text() });
      } catch (error) {
        answers.push({ status: 0, body: String(error) });
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    return { result: await attack, answers };
  } finally {
    done = true;
    await load;
  }
}

/** Every bystander request was answered, by its own source, during the attack. */
export function servedThroughout(answers: Array<{ status: number; body: string }>): boolean {
  return answers.length > 0 && answers.every((answer) => answer.status === 200 && /^still here \d+$/.test(answer.body));
}

/** POSTs JSON to an endpoint and returns the status and the text of the answer. */
export async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

/** The last lines of a source's logs. */
export async function sourceLogs(server: TestServer, key: string, sourceId: string): Promise<string[]> {
  const response = await call(server.url, "GET", `/v1/sources/${sourceId}/logs?limit=100`, { key });
  return response.body.data.map((log: { text: string }) => log.text);
}
