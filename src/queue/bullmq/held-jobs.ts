import type { Redis } from "ioredis";
import pg from "pg";

/** An active job and the lock token it is held under (null: its lock ran out, and the stall check will take it). */
export interface HeldJob {
  id: string;
  token: string | null;
}

/**
 * What BullMQ's API does not answer, read from its own storage: the jobs a
 * worker name holds (BullMQ records the name as the job's `processedBy` when
 * it is claimed, and its lock token beside it), and counting an interruption
 * of one (BullMQ's stalled counter, which its stall check increments). Used
 * by takeBackInterrupted: a process started again on its data folder, with
 * the same name, releases at once what its previous life held.
 */
export interface HeldJobs {
  /** The active jobs of `queueName` last claimed by `workerName` (null: by anyone). */
  activeJobsOf(queueName: string, workerName: string | null): Promise<HeldJob[]>;
  /** Counts one interruption of a job still active under `token`: false when it is not (settled or taken over since). */
  countInterruption(queueName: string, id: string, token: string): Promise<boolean>;
}

/**
 * Redis: the active list `<prefix>:<queue>:active`, each job's hash
 * `<prefix>:<queue>:<id>` (`pb` the worker name, `stc` the stalled counter)
 * and its lock `<prefix>:<queue>:<id>:lock` (the token, expiring with the lease).
 */
export function redisHeldJobs(connection: Redis, prefix: string): HeldJobs {
  const jobKey = (queueName: string, id: string) => `${prefix}:${queueName}:${id}`;
  return {
    async activeJobsOf(queueName, workerName) {
      const ids = await connection.lrange(`${prefix}:${queueName}:active`, 0, -1);
      if (ids.length === 0) return [];
      const reads = connection.pipeline();
      for (const id of ids) reads.hget(jobKey(queueName, id), "pb").get(`${jobKey(queueName, id)}:lock`);
      const answers = (await reads.exec()) ?? [];
      const held: HeldJob[] = [];
      ids.forEach((id, index) => {
        const [byError, by] = answers[index * 2] ?? [];
        const [tokenError, token] = answers[index * 2 + 1] ?? [];
        if (byError || tokenError) throw byError ?? tokenError;
        if (workerName === null || by === workerName) held.push({ id, token: typeof token === "string" ? token : null });
      });
      return held;
    },
    async countInterruption(queueName, id, token) {
      const counted = await connection.eval(
        `if redis.call("GET", KEYS[1]) == ARGV[1] then redis.call("HINCRBY", KEYS[2], "stc", 1) return 1 end return 0`,
        2,
        `${jobKey(queueName, id)}:lock`,
        jobKey(queueName, id),
        token,
      );
      return counted === 1;
    },
  };
}

/**
 * PostgreSQL: BullMQ's `job` table in the queue's schema (`processed_by`,
 * `lock_token`, `stalled_count`). One short connection per call: these run
 * once at a start, and the queue's own pools are BullMQ's.
 */
export function postgresHeldJobs(url: string, schema: string): HeldJobs {
  const table = `${pg.escapeIdentifier(schema)}.job`;
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await client.query<R>(text, values);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  return {
    async activeJobsOf(queueName, workerName) {
      const result = await query<{ id: string; lock_token: string | null }>(
        `SELECT id, lock_token FROM ${table} WHERE queue = $1 AND state = 'active' AND ($2::text IS NULL OR processed_by = $2) ORDER BY seq`,
        [queueName, workerName],
      );
      return result.rows.map((row) => ({ id: row.id, token: row.lock_token }));
    },
    async countInterruption(queueName, id, token) {
      const result = await query(`UPDATE ${table} SET stalled_count = stalled_count + 1 WHERE queue = $1 AND id = $2 AND state = 'active' AND lock_token = $3`, [queueName, id, token]);
      return (result.rowCount ?? 0) > 0;
    },
  };
}
