import { sql, SqliteAdapter, type Kysely, type Migration } from "kysely";

function isSqlite(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

/** Saved components, deployed sources, their events, logs and per-emitter state. */
export const sourcesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("components")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("version", "text", (col) => col.notNull())
      .addColumn("key", "text")
      .addColumn("kind", "text", (col) => col.notNull())
      .addColumn("code", "text", (col) => col.notNull())
      .addColumn("code_hash", "text", (col) => col.notNull())
      .addColumn("bundle", "text", (col) => col.notNull())
      .addColumn("bundle_hash", "text", (col) => col.notNull())
      .addColumn("manifest", "text", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .execute();
    await db.schema.createIndex("components_owner_key").on("components").columns(["owner_id", "key", "id"]).execute();
    await db.schema.createIndex("components_owner_hash").on("components").columns(["owner_id", "code_hash"]).execute();

    await db.schema
      .createTable("sources")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("component_id", "text", (col) => col.notNull().references("components.id"))
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("name_slug", "text", (col) => col.notNull())
      .addColumn("configured_props", "text", (col) => col.notNull())
      .addColumn("active", "integer", (col) => col.notNull())
      .addColumn("endpoint_token", "text", (col) => col.unique())
      .addColumn("timer", "text")
      .addColumn("next_tick_at", "bigint")
      .addColumn("retention", "integer", (col) => col.notNull())
      .addColumn("db_state", "text", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .addUniqueConstraint("sources_owner_slug", ["owner_id", "name_slug"])
      .execute();
    await db.schema.createIndex("sources_owner_id").on("sources").columns(["owner_id", "id"]).execute();
    await db.schema.createIndex("sources_next_tick").on("sources").columns(["next_tick_at"]).execute();

    // One row per emitter (source or workflow): where its event ids and dedupe stand.
    await db.schema
      .createTable("emitter_state")
      .addColumn("emitter_id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull())
      .addColumn("last_ms", "bigint", (col) => col.notNull())
      .addColumn("last_seq", "integer", (col) => col.notNull())
      .addColumn("dedupe_state", "text")
      .execute();

    // Events sort by (ms, seq), the two parts of their `<ms>-<seq>` id: text order would put "1-10" before "1-9".
    await db.schema
      .createTable("events")
      .addColumn("emitter_id", "text", (col) => col.notNull())
      .addColumn("ms", "bigint", (col) => col.notNull())
      .addColumn("seq", "integer", (col) => col.notNull())
      .addColumn("owner_id", "text", (col) => col.notNull())
      .addColumn("channel", "text", (col) => col.notNull())
      .addColumn("summary", "text")
      .addColumn("emit_id", "text")
      .addColumn("event", "text", (col) => col.notNull())
      .addColumn("indexed_at_ms", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("events_pk", ["emitter_id", "ms", "seq"])
      // SQLite: rows live in the primary key's b-tree, one b-tree fewer to write per event (PostgreSQL has no such option).
      .$call((table) => (isSqlite(db) ? table.modifyEnd(sql`without rowid`) : table))
      .execute();
    await db.schema.createIndex("events_channel").on("events").columns(["emitter_id", "channel", "ms", "seq"]).execute();

    await db.schema
      .createTable("logs")
      .addColumn("emitter_id", "text", (col) => col.notNull())
      .addColumn("ms", "bigint", (col) => col.notNull())
      .addColumn("seq", "integer", (col) => col.notNull())
      .addColumn("owner_id", "text", (col) => col.notNull())
      .addColumn("stream", "text", (col) => col.notNull())
      .addColumn("text", "text", (col) => col.notNull())
      .addPrimaryKeyConstraint("logs_pk", ["emitter_id", "ms", "seq"])
      .execute();
  },
};
