import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSection } from "../../src/chaos/reliability-doc.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";
import { createWorkflow } from "../workflows/helpers.js";
import { apiRequest, type FuzzRequest, type Operation, operationsOf } from "./openapi-arbitraries.js";

/**
 * API fuzzing generated from the server's own OpenAPI document: every
 * operation, with valid, wrong and hostile path parameters, queries and
 * bodies, sent by a second user (and sometimes by no one), against a real
 * server where the first user owns a source, a workflow, a subscription, a
 * published component and events. Properties:
 * - no 5xx (but 502 RegistryUnavailable: the npm registry is unreachable here, on purpose);
 * - every error has the API's shape {"error": {"code", "message"}};
 * - the second user never sees what the first owns (unless it sent it itself);
 * - the server is alive at the end.
 * FUZZ_RUNS (default 10,000) and FUZZ_SEED reproduce a run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const OWNER_MARK = "owner-only-7c2e9f";

const SOURCE = `module.exports = { name: "${OWNER_MARK} source", version: "0.1.0", props: { http: { type: "$.interface.http" }, token: { type: "string", secret: true } },
  run(event) { this.$emit({ mark: "${OWNER_MARK}-event" }, { summary: "${OWNER_MARK} summary" }); } };`;

let server: TestServer;
let owner: { id: string; key: string };
let other: { id: string; key: string };
let ownerSecrets: string[];
let operations: Operation[];

beforeAll(async () => {
  // An npm registry nobody listens on: imports fail at once with 502 RegistryUnavailable.
  server = await startTestServer({ RUNNEL_NPM_REGISTRY: "http://127.0.0.1:9/" });
  owner = await createUser(server, "owner");
  other = await createUser(server, "other");
  const source = await deploySource(server, owner.key, { component_code: SOURCE, configured_props: { token: `${OWNER_MARK}-token` } });
  await fetch(source.endpoint_url, { method: "POST", body: "x" });
  const workflow = await createWorkflow(server, owner.key, { name: `${OWNER_MARK} workflow`, trigger: { type: "http" }, steps: [{ name: "s", code: "export default defineComponent({ run() { throw new Error('fails for its $errors'); } })" }] });
  await fetch(workflow.trigger.endpoint_url, { method: "POST", body: "x" });
  await call(server.url, "POST", `/v1/subscriptions?emitter_id=${source.id}&listener_id=${workflow.id}&event_name=`, { key: owner.key });
  const published = await call(server.url, "POST", "/v1/components/registry", {
    key: owner.key,
    json: { component_code: `module.exports = { name: "${OWNER_MARK} action", key: "owner-action", version: "1.0.0", type: "action", run() { return 1; } };` },
  });
  const keys = await call(server.url, "GET", "/v1/users/me/api_keys", { key: owner.key });
  const events = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries`, { key: owner.key });
  ownerSecrets = [
    OWNER_MARK,
    owner.id,
    owner.key,
    source.id,
    source.endpoint_url.split("/e/")[1],
    workflow.id,
    workflow.trigger.endpoint_url.split("/e/")[1],
    workflow.trigger.source_id,
    published.body.data?.component?.id,
    ...keys.body.data.map((key: { id: string }) => key.id),
    ...events.body.data.map((event: { id: string }) => event.id),
  ].filter((value): value is string => typeof value === "string" && value.length > 0);
  const document = await call(server.url, "GET", "/v1/openapi.json", { key: other.key });
  operations = operationsOf(document.body);
}, 120_000);
afterAll(() => server?.close());

const pools = () => ({
  // Identifiers worth trying: the owner's (another user's, to this caller), the caller's own shapes, and junk.
  ids: [...ownerSecrets.filter((value) => /^[a-z]+_/.test(value) && value !== owner.key), "dc_00000000000000000000000000", "p_00000000000000000000000000", "owner-action"],
  keys: { owner: owner.key, other: other.key },
});

async function send(request: FuzzRequest): Promise<{ status: number; text: string; contentType: string }> {
  const response = await fetch(`${server.url}${request.path}`, { method: request.method, headers: request.headers, body: request.body, signal: AbortSignal.timeout(20_000) });
  return { status: response.status, text: await response.text(), contentType: response.headers.get("content-type") ?? "" };
}

describe("the API under generated requests", () => {
  it(`answers ${RUNS} generated requests without a 5xx, in its error shape, and never shows one user another's data (seed ${SEED})`, async () => {
    const started = Date.now();
    const statuses = new Map<number, number>();
    const covered = new Set<string>();
    // What the other user has itself sent (an API key named after the owner's id, say) may come back to it: not a leak.
    const sentByOthers = new Set<string>();
    await fc.assert(
      fc.asyncProperty(apiRequest(operations, pools()), async (request) => {
        covered.add(`${request.method} ${request.template}`);
        const answer = await send(request);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const context = `${request.method} ${request.path} (${request.caller}) → ${answer.status} ${answer.text.slice(0, 300)}`;
        if (answer.status >= 500) expect(answer.status === 502 && answer.text.includes('"RegistryUnavailable"'), context).toBe(true);
        if (answer.status >= 400 && answer.contentType.includes("application/json")) {
          const error = JSON.parse(answer.text).error;
          expect(typeof error?.code === "string" && typeof error?.message === "string", context).toBe(true);
        }
        if (request.caller !== "owner") {
          const sent = `${decodeURIComponent(request.path.replace(/%(?![0-9a-f]{2})/gi, "%25"))} ${request.path} ${request.body ?? ""}`;
          for (const secret of ownerSecrets) if (sent.includes(secret)) sentByOthers.add(secret);
          for (const secret of ownerSecrets) if (!sentByOthers.has(secret)) expect(answer.text.includes(secret), `${context}: shows the owner's ${secret}`).toBe(false);
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    expect((await call(server.url, "GET", "/healthz")).status).toBe(200);
    // Every operation was tried (the generator picks them evenly).
    expect(covered.size).toBe(operations.length);
    const summary = `seed ${SEED}: ${RUNS} requests over ${covered.size} operations; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`;
    console.log(`[fuzz] ${summary}`);
    if (process.env.FUZZ_DOCS === "1") {
      const counts = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(", ");
      await writeSection(
        "fuzz",
        `Last run: ${new Date().toISOString().slice(0, 10)}, ${RUNS} requests (seed ${SEED}) over all ${covered.size} operations but the live streams, in ${((Date.now() - started) / 1000).toFixed(0)} s, node ${process.version}: no 5xx, no crash, no answer to one user holding the other's ids or data. Statuses: ${counts}.`,
      );
    }
  }, 600_000);

  it("answers a request too large to parse in the same error shape", async () => {
    const answer = await send({ method: "GET", template: "/v1/users/me", path: `/v1/users/me?q=${"a".repeat(20_000)}`, headers: { authorization: `Bearer ${other.key}` }, body: undefined, caller: "other" });
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.text).error).toMatchObject({ code: "RequestTooLarge", message: expect.stringContaining("16 KB") });
    expect((await call(server.url, "GET", "/healthz")).status).toBe(200);
  });
});
