import pg from "pg";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";

/**
 * Vitest global set-up: keeps the test database's system catalogs vacuumed
 * while the suite runs. The tests create and drop a schema of 34 tables
 * hundreds of times (a store's migrations each time), and every one
 * leaves dead rows in pg_attribute, pg_class, pg_depend and the rest; the CI
 * machines' PostgreSQL runs with autovacuum off, so nothing removes them.
 * One suite left 260,000 dead rows in pg_attribute alone, and every later
 * migration, the next Node.js's run included, was slower for it (a store's
 * contract suite 15 % slower). A plain VACUUM of the catalogs takes under a
 * second and blocks no DDL; it runs at the start and every minute.
 * Without PostgreSQL it does nothing: the files that need it fail loudly.
 */
const CATALOGS = ["pg_attribute", "pg_class", "pg_depend", "pg_type", "pg_constraint", "pg_index", "pg_trigger", "pg_attrdef", "pg_namespace", "pg_shdepend", "pg_description", "pg_sequence"];
const EVERY_MS = 60_000;

export default async function vacuumCatalogsWhileRunning(): Promise<() => Promise<void>> {
  const vacuum = async (): Promise<void> => {
    // Bounded: a VACUUM held up behind some lock must not hold up the suite's end, which waits for it.
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2_000, statement_timeout: 30_000 });
    try {
      await client.connect();
      await client.query(`VACUUM ${CATALOGS.map((table) => `pg_catalog.${table}`).join(", ")}`);
    } catch {
      // Not reachable, or not allowed (a user who is not the catalogs' owner): the suite runs as it would have.
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  await vacuum();
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => void (running = running.then(vacuum)), EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
