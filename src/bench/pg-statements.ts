import pg from "pg";

/** What one measured stretch cost PostgreSQL in statements: all of them a run, and the most frequent ones. */
export interface StatementsPerRun {
  perRun: number;
  top: Array<{ label: string; perRun: number }>;
}

const HOW_TO_ENABLE =
  "RUNNEL_BENCH_STATEMENTS needs PostgreSQL's pg_stat_statements loaded: run ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements' as a superuser, restart PostgreSQL, and run the bench again (it creates the extension). ALTER SYSTEM RESET shared_preload_libraries and a restart undo it.";

/**
 * `RUNNEL_BENCH_STATEMENTS=1`: the statements PostgreSQL ran a run (every
 * client's top-level statements, from pg_stat_statements, reset when the
 * measured stretch starts). Throughput on a shared two-core machine
 * drifts by 20 % from one run to the next, so a change that saves a tenth
 * of the work cannot be seen in it; a count of statements does not drift.
 * Read with care: it counts every client of the database, so nothing else
 * should use it meanwhile.
 */
export class StatementCounter {
  private constructor(private readonly client: pg.Client) {}

  /** A counter when RUNNEL_BENCH_STATEMENTS asks for one, else null; fails saying how to enable it when PostgreSQL cannot count. */
  static async open(url: string): Promise<StatementCounter | null> {
    if (!process.env.RUNNEL_BENCH_STATEMENTS) return null;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const loaded = await client.query<{ libraries: string }>("SELECT current_setting('shared_preload_libraries') AS libraries");
      if (!/\bpg_stat_statements\b/.test(loaded.rows[0]?.libraries ?? "")) throw new Error(HOW_TO_ENABLE);
      await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    } catch (error) {
      await client.end();
      throw error;
    }
    return new StatementCounter(client);
  }

  /** Starts counting from zero. */
  async reset(): Promise<void> {
    await this.client.query("SELECT pg_stat_statements_reset()");
  }

  /** What was counted since the reset, divided by `runs`. */
  async perRun(runs: number, topCount = 6): Promise<StatementsPerRun> {
    const { rows } = await this.client.query<{ query: string; calls: string }>("SELECT query, calls FROM pg_stat_statements WHERE toplevel");
    const byLabel = new Map<string, number>();
    let total = 0;
    for (const row of rows) {
      const calls = Number(row.calls);
      total += calls;
      const label = labelOf(row.query);
      byLabel.set(label, (byLabel.get(label) ?? 0) + calls);
    }
    const divisor = Math.max(1, runs);
    const top = [...byLabel]
      .sort((a, b) => b[1] - a[1])
      .slice(0, topCount)
      .map(([label, calls]) => ({ label, perRun: calls / divisor }));
    return { perRun: total / divisor, top };
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

/**
 * A short name for a statement: the function a `SELECT … f(…)` calls
 * (BullMQ's PostgreSQL backend is such calls, each file led by comments),
 * else its verb and first table (`insert into runs`, `select emitter_state`;
 * a prepared statement's `PREPARE name AS` and a WITH before a write left
 * out), else its start. The same statement prepared under several names counts as one.
 */
export function labelOf(query: string): string {
  const text = query
    .replace(/^(\s*--[^\n]*\n)+/, "")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^PREPARE \S+ AS /i, "");
  const call = /^SELECT (?:\* FROM |[a-z_, ]+ FROM )?([a-z_][a-z0-9_]*)\(/i.exec(text);
  if (call && !/^(count|exists|cast)$/i.test(call[1]!)) return call[1]!;
  // A WITH's own statement when it writes, else the write inside it (the events' trim is a DELETE in a WITH).
  const write = /\b(insert into|update|delete from) "?([a-z_][a-z0-9_]*)"?/i.exec(text.replace(/^with .*?\)\s*(?=insert|update|delete)/i, ""));
  if (write) return `${write[1]!.toLowerCase()} ${write[2]}`;
  const read = /^select .*? from "?([a-z_][a-z0-9_]*)"?/i.exec(text);
  if (read) return `select ${read[1]}`;
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** "1.57 statements a run (pg_notify 0.26, move_to_active 0.22, …)". */
export function describeStatements(counted: StatementsPerRun): string {
  return `${counted.perRun.toFixed(2)} PostgreSQL statements a run (${counted.top.map((one) => `${one.label} ${one.perRun.toFixed(2)}`).join(", ")})`;
}
