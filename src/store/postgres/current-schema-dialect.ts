import { PostgresDialect, sql, type DatabaseIntrospector, type DatabaseMetadata, type Kysely, type SchemaMetadata, type TableMetadata } from "kysely";

/**
 * PostgreSQL as Kysely's dialect, but introspecting only the connection's
 * own schema. Kysely's migrator lists tables to see whether its bookkeeping
 * tables exist; the stock introspector reads every schema of the database,
 * column by column, and fails outright ("schema … does not exist") when
 * another store on the same database (a test's, another Runnel's) drops its
 * schema during the listing. Runnel keeps all its tables in one schema, so
 * that is all it ever needs to see.
 */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`SELECT current_schema() AS name`.execute(this.db);
    return rows;
  }

  /** Tables and views of the current schema, by name (the migrator needs no columns). */
  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; type: string }>`
      SELECT table_name AS name, table_schema AS schema, table_type AS type
      FROM information_schema.tables WHERE table_schema = current_schema()`.execute(this.db);
    return rows.map((row) => ({ name: row.name, schema: row.schema, isView: row.type === "VIEW", columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}
