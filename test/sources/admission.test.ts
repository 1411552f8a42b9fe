import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";

/** A source that answers each request after a while: requests to it stay pending meanwhile. */
const SLOW = `module.exports = {
  name: "slow", version: "1.0.0",
  props: { http: { type: "$.interface.http", customResponse: true } },
  async run(event) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    this.http.respond({ status: 200, body: "done" });
  },
};`;

/**
 * Admission control at the endpoints: past the pending limits a request is
 * answered 503 with Retry-After at once, naming the limit; the admitted
 * requests run; another account is still served while one is at its limit;
 * and every place is given back once its request is handled.
 */
describe("endpoint admission", () => {
  let server: TestServer;
  let first: { endpoint_url: string };
  let second: { endpoint_url: string };
  let other: { endpoint_url: string };

  // A server of its own for each test: an admitted request keeps its place until its run is recorded, a
  // moment after its caller got the answer, so places taken by one test could still be held in the next.
  beforeEach(async () => {
    server = await startTestServer({ RUNNEL_MAX_PENDING_REQUESTS_PER_OWNER: "3", RUNNEL_MAX_PENDING_REQUESTS: "5" });
    first = await deploySource(server, server.adminKey, { component_code: SLOW, name: "slow one" });
    const user = await createUser(server, "neighbour");
    second = await deploySource(server, user.key, { component_code: SLOW, name: "slow two" });
    other = await deploySource(server, user.key, { component_code: SLOW, name: "slow three" });
  }, 60_000);
  afterEach(async () => {
    await server?.close();
  });

  const post = async (url: string) => {
    const response = await fetch(url, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    return { status: response.status, retryAfter: response.headers.get("retry-after"), text: await response.text() };
  };

  it("turns away one account's requests past its limit, at once, and still serves another account", async () => {
    const flood = Array.from({ length: 6 }, () => post(first.endpoint_url));
    // While the account is at its limit, another account's request is admitted and answered.
    const neighbour = await post(second.endpoint_url);
    expect(neighbour).toMatchObject({ status: 200, text: "done" });
    const answers = await Promise.all(flood);
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 503);
    expect(admitted).toHaveLength(3);
    expect(refused).toHaveLength(3);
    for (const answer of refused) {
      expect(answer.retryAfter).toBe("1");
      expect(JSON.parse(answer.text).error).toMatchObject({ code: "Unavailable", message: expect.stringContaining("RUNNEL_MAX_PENDING_REQUESTS_PER_OWNER") });
    }
    // Their places were given back: the account is served again.
    expect(await post(first.endpoint_url)).toMatchObject({ status: 200, text: "done" });
  }, 30_000);

  it("turns away requests past the server's limit, whoever sends them", async () => {
    const mine = Array.from({ length: 3 }, () => post(first.endpoint_url));
    const theirs = Array.from({ length: 3 }, () => post(other.endpoint_url));
    const answers = await Promise.all([...mine, ...theirs]);
    // Five in all were admitted (the server's limit): the sixth, whichever it was, was not.
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(5);
    const refused = answers.filter((answer) => answer.status === 503);
    expect(refused).toHaveLength(1);
    expect(JSON.parse(refused[0]!.text).error.message).toContain("RUNNEL_MAX_PENDING_REQUESTS)");
    expect(await post(other.endpoint_url)).toMatchObject({ status: 200, text: "done" });
  }, 30_000);
});
