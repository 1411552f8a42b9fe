import pg from "pg";
import type { OneTrip } from "../../src/store/postgres/one-trip.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";

/** The local PostgreSQL of the development and CI machines (trust auth, database `test`). */
export const TEST_DATABASE_URL = process.env.RUNNEL_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * Fails the test file, loudly, when PostgreSQL cannot be reached: the
 * PostgreSQL adapter is half the product, so a run without it must not pass.
 */
export async function requirePostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `PostgreSQL is not reachable at ${TEST_DATABASE_URL} (${reason}). ` +
        "Start it (pg_ctlcluster <version> main start) or point RUNNEL_TEST_DATABASE_URL at one.",
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh schema on the test PostgreSQL for one test file: the DATABASE_URL that uses it, and a way to drop it. */
export async function createTestSchema(prefix: string): Promise<{ schema: string; databaseUrl: string; admin: pg.Client; drop(): Promise<void> }> {
  await requirePostgres();
  const schema = `${prefix}_${(await import("node:crypto")).randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  return {
    schema,
    databaseUrl: `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    admin,
    async drop() {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/** Messages sent through a counted OneTrip, and how many of them failed. */
export interface TripCounts {
  sent: number;
  failed: number;
}

/** `send` (one-trip.ts), counting each message into `counts`. */
export function countedTrips(send: OneTrip, counts: TripCounts): OneTrip {
  return async (statements) => {
    counts.sent += 1;
    try {
      return await send(statements);
    } catch (error) {
      counts.failed += 1;
      throw error;
    }
  };
}

/** A test schema holding Runnel's tables (migrated), and a pool of `poolSize` on it: the caller ends the pool and drops the schema. */
export async function migratedTestSchema(prefix: string, poolSize = 4): Promise<{ schema: Awaited<ReturnType<typeof createTestSchema>>; pool: pg.Pool }> {
  const schema = await createTestSchema(prefix);
  const migrating = createPostgresStore({ connectionString: schema.databaseUrl, schema: schema.schema, maxConnections: 2 });
  await migrating.migrate();
  await migrating.close();
  return { schema, pool: new pg.Pool({ connectionString: schema.databaseUrl, max: poolSize }) };
}
