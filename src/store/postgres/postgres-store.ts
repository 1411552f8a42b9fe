import { Kysely } from "kysely";
import pg from "pg";
import { createKyselyStore } from "../kysely/kysely-store.js";
import { migrateToLatest, pendingMigrationNames } from "../kysely/migrate.js";
import { CurrentSchemaPostgresDialect } from "./current-schema-dialect.js";
import { oneTripOn, tripSessionOn } from "./one-trip.js";
import type { Database } from "../kysely/schema.js";
import type { Store } from "../store.js";

export interface PostgresStoreOptions {
  connectionString: string;
  /** A schema to keep all tables in (created when missing); tests use one each. */
  schema?: string | undefined;
  maxConnections?: number | undefined;
}

// int8 columns (epoch-ms times, counts) come back as strings by default; every
// value we keep there fits in a double, so parse them as numbers for this pool only.
const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8_OID && format !== "binary") return (value: string) => Number(value);
    return (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format);
  },
} as pg.CustomTypesConfig;

/** The scale-out store: PostgreSQL through a pool this adapter owns. */
export function createPostgresStore(options: PostgresStoreOptions): Store {
  const schema = options.schema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`Invalid PostgreSQL schema name "${schema}".`);
  }
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    types,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
  const store = createKyselyStore({ kind: "postgres", db, isUniqueViolation, oneTrip: oneTripOn(pool), tripSession: tripSessionOn(pool) });

  // The schema the tables go in: the one given, or the connection's own (a search_path in the URL, else public).
  const currentSchema = async () => schema ?? ((await pool.query<{ schema: string }>("SELECT current_schema() AS schema")).rows[0]?.schema || undefined);
  return {
    ...store,
    async migrate() {
      if (schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await migrateToLatest(db, await currentSchema());
    },
    async pendingMigrations() {
      return pendingMigrationNames(db, await currentSchema());
    },
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "23505";
}
