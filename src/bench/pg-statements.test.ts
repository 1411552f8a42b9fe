import { describe, expect, it } from "vitest";
import { labelOf } from "./pg-statements.js";

describe("labelOf", () => {
  it("names BullMQ's calls by function, Kysely's statements by verb and table, and leaves the rest short", () => {
    expect(labelOf("-- Claim the next ready job for a worker.\n-- Params: $1 queue\nSELECT * FROM move_to_active($1, $2, $3, $4, $5, $6, $7);\n")).toBe("move_to_active");
    expect(labelOf("-- Insert a single job.\nSELECT add_job(\n  $1, $2\n) AS id;\n")).toBe("add_job");
    expect(labelOf("SELECT rate_limit_ttl, next_delay FROM next_signal($1, $2, $3);")).toBe("next_signal");
    expect(labelOf("SELECT pg_notify($1, $2)")).toBe("pg_notify");
    expect(labelOf('PREPARE runnel_12 AS insert into "events" ("emitter_id", "ms") values ($1, $2)')).toBe("insert into events");
    expect(labelOf('with "gates" as (select * from "workflow_gates" where "workflow_id" in ($1) order by "workflow_id" for update) insert into "runs" ("id") values ($1)')).toBe("insert into runs");
    expect(labelOf('PREPARE runnel_5 AS update "emitter_state" set "last_ms" = $1 where "emitter_id" = $2')).toBe("update emitter_state");
    expect(labelOf('select "s"."id", "g"."workflow_id" as "gated" from "subscriptions" as "s" left join "workflow_gates" as "g" on 1')).toBe("select subscriptions");
    expect(labelOf("SELECT CAST(CASE WHEN EXISTS (SELECT $1 FROM workflow_gates WHERE workflow_id IN ($2)) THEN $3 END AS integer) AS unchanged")).toBe("select workflow_gates");
    expect(labelOf('PREPARE runnel_29 AS WITH gone AS (DELETE FROM "events" WHERE emitter_id = $1) SELECT count(*) FROM gone')).toBe("delete from events");
    expect(labelOf("BEGIN")).toBe("BEGIN");
  });
});
