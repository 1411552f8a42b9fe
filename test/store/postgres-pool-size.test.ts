import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { createTestSchema } from "../helpers/postgres.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * RUNNEL_DATABASE_POOL_SIZE bounds the connections a server's store holds to
 * PostgreSQL (every process of an installation holds its own, against
 * PostgreSQL's max_connections). Each server here names its connections
 * (application_name in DATABASE_URL), so the count is its own whatever
 * else the suite runs beside it.
 */
describe("the store's PostgreSQL pool", () => {
  const servers: TestServer[] = [];
  const schemas: Array<Awaited<ReturnType<typeof createTestSchema>>> = [];

  afterAll(async () => {
    for (const server of servers) {
      await server.close();
      await rm(server.dataDir, { recursive: true, force: true });
    }
    for (const schema of schemas) await schema.drop();
  });

  /** The most connections the server held while answering `requests` list requests at once. */
  async function connectionsUnderLoad(poolSize: string | undefined): Promise<number> {
    const name = `runnel_pool_${randomBytes(4).toString("hex")}`;
    // A schema each: the first server of a schema makes its admin (and writes the key the test uses).
    const schema = await createTestSchema("pool_size");
    schemas.push(schema);
    const server = await startTestServer({ DATABASE_URL: `${schema.databaseUrl}&application_name=${name}`, ...(poolSize ? { RUNNEL_DATABASE_POOL_SIZE: poolSize } : {}) });
    servers.push(server);
    const count = async () => Number((await schema.admin.query("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1", [name])).rows[0].n);
    let most = 0;
    let loading = true;
    const sampling = (async () => {
      while (loading) {
        most = Math.max(most, await count());
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(Array.from({ length: 40 }, () => call(server.url, "GET", "/v1/users/me/sources?limit=10", { key: server.adminKey })));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    }
    loading = false;
    await sampling;
    // A pool keeps its connections open a while once used: the count after the load is its size at most too.
    return Math.max(most, await count());
  }

  it("holds at most RUNNEL_DATABASE_POOL_SIZE connections under concurrent requests, and more without it", async () => {
    const bounded = await connectionsUnderLoad("2");
    expect(bounded).toBeGreaterThanOrEqual(1);
    expect(bounded).toBeLessThanOrEqual(2);
    // The default (10) opens more under the same load: the bound above is the setting's doing.
    expect(await connectionsUnderLoad(undefined)).toBeGreaterThan(2);
  }, 60_000);
});
