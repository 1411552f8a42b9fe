import pg from "pg";

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
