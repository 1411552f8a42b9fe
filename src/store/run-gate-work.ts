import { gateKeyOf, nextRateSlot } from "../domain/run-gate.js";
import type { deliveriesFor } from "./append-plan.js";

/**
 * The gate of workflows' runs in the store (migration 0025), written once for
 * both adapters: each operation is a generator that yields its statements
 * (SQL with `?` placeholders, `{lock}` where PostgreSQL locks the row read)
 * and gets their answers back; run-gate-drivers.ts runs it synchronously on
 * better-sqlite3 (inside the append's and finishRuns' transactions) or
 * through Kysely on either database.
 *
 * One lock per gated workflow (its `workflow_gates` row, taken first by
 * every admission into or out of its lines): appends and recorded runs in
 * several processes take turns over its slots, and never deadlock.
 */
export interface GateStatement {
  sql: string;
  params: unknown[];
  /** True: answers the rows (SELECT, RETURNING); false: how many rows changed. */
  rows: boolean;
}

export type GateWork<T> = Generator<GateStatement, T, unknown>;

/**
 * Which database the work's statements go to. The work is written once, but
 * on PostgreSQL, where every statement is a round trip, a few steps are one
 * statement each (data-modifying CTEs, which SQLite does not have).
 */
export type GateDialect = "sqlite" | "postgres";

export type DeliveryRowPlan = ReturnType<typeof deliveriesFor>[number];

export interface GateRow {
  workflow_id: string;
  concurrency: number | string | null;
  concurrency_key: string | null;
  rate_runs: number | string | null;
  rate_per_ms: number | string | null;
  rate_recent: string | null;
  next_position: number | string;
}

export interface WaitingRow {
  workflow_id: string;
  emitter_id: string;
  event_id: string;
  owner_id: string;
  subscription_id: string;
  channel: string;
  payload: string | null;
  indexed_at_ms: number | string | null;
  created_at: number | string;
}

/** What the gate made of an append's delivery rows. */
export interface GatedRows {
  /** Rows to write as the append would have: ungated, or admitted and due now. */
  due: DeliveryRowPlan[];
  /** Rows admitted under a rate limit with a later due time: written pending until then, never claimed at once. */
  later: DeliveryRowPlan[];
  /** How many went to wait in their line (no delivery row yet). */
  waiting: number;
}

function* rowsOf<T>(sql: string, params: unknown[]): GateWork<T[]> {
  return (yield { sql, params, rows: true }) as T[];
}

function* change(sql: string, params: unknown[]): GateWork<number> {
  return (yield { sql, params, rows: false }) as number;
}

/** The gate rows of these workflows, locked in id order (one order for every transaction: no deadlock). */
function* lockGates(workflowIds: string[]): GateWork<Map<string, GateRow>> {
  const gates = new Map<string, GateRow>();
  for (const id of [...new Set(workflowIds)].sort()) {
    const [gate] = yield* rowsOf<GateRow>("SELECT * FROM workflow_gates WHERE workflow_id = ?{lock}", [id]);
    if (gate) gates.set(id, gate);
  }
  return gates;
}

/** The due time of the next admission under the gate's rate limit (now without one), recorded in its row. */
function* rateSlot(gate: GateRow, now: number): GateWork<number> {
  if (gate.rate_runs === null || gate.rate_per_ms === null) return now;
  const recent = gate.rate_recent ? (JSON.parse(gate.rate_recent) as number[]) : [];
  const slot = nextRateSlot(recent, { runs: Number(gate.rate_runs), perMs: Number(gate.rate_per_ms) }, now);
  gate.rate_recent = JSON.stringify(slot.recent);
  yield* change("UPDATE workflow_gates SET rate_recent = ? WHERE workflow_id = ?", [gate.rate_recent, gate.workflow_id]);
  return slot.at;
}

/**
 * An append's delivery rows through the gates of their listeners
 * (`gatedListeners`: the listeners with a gate, as the append's
 * subscription query found them). With a concurrency, a row joins its
 * key's line: admitted at once when a slot is free and nobody waits before
 * it, else it waits (no delivery row). An admitted row of a rate-limited
 * workflow is due at its slot's time.
 */
export function* gateAppendRows(rows: DeliveryRowPlan[], gatedListeners: Set<string>, now: number, dialect: GateDialect = "sqlite"): GateWork<GatedRows> {
  const gatedRows = rows.filter((row) => gatedListeners.has(row.listener_id));
  if (gatedRows.length === 0) return { due: rows, later: [], waiting: 0 };
  const gates = yield* lockGates(gatedRows.map((row) => row.listener_id));
  const result: GatedRows = { due: [], later: [], waiting: 0 };
  for (const row of rows) {
    const gate = gates.get(row.listener_id);
    if (!gate) {
      result.due.push(row);
      continue;
    }
    if (gate.concurrency !== null) {
      // The event is parsed only when the gate has a key to read from it.
      const key = gateKeyOf(gate.concurrency_key, row.payload === null || gate.concurrency_key === null ? null : JSON.parse(row.payload));
      const state = dialect === "postgres" ? yield* joinLine(gate, key, row) : yield* joinLineStepwise(gate, key, row);
      // Recorded before (the same delivery again): it is in its line already, or ran.
      if (state === null) continue;
      if (state === "waiting") {
        result.waiting += 1;
        continue;
      }
    }
    const at = yield* rateSlot(gate, now);
    row.available_at = Math.max(row.available_at, at);
    (at > now ? result.later : result.due).push(row);
  }
  return result;
}

/** A delivery joins its key's line (see joinLine), one step a statement. */
function* joinLineStepwise(gate: GateRow, key: string, row: DeliveryRowPlan): GateWork<"admitted" | "waiting" | null> {
  const position = Number(gate.next_position);
  gate.next_position = position + 1;
  yield* change("UPDATE workflow_gates SET next_position = ? WHERE workflow_id = ?", [position + 1, gate.workflow_id]);
  const free = yield* hasFreeSlot(gate, key);
  const state = free ? "admitted" : "waiting";
  const inserted = yield* change(
    `INSERT INTO run_gate (workflow_id, emitter_id, event_id, owner_id, gate_key, position, state, subscription_id, channel, payload, indexed_at_ms, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    [row.listener_id, row.emitter_id, row.event_id, row.owner_id, key, position, state, row.subscription_id, row.channel, row.payload, row.indexed_at_ms, row.created_at],
  );
  return inserted === 0 ? null : state;
}

/**
 * PostgreSQL: a delivery joins its key's line in one statement (its
 * position taken, admitted when a slot is free and nobody waits before it,
 * else waiting), where the steps of the other branch take four round trips,
 * all of them with the gate's lock held: a one-at-a-time line's record waits
 * on that lock behind each new request's append. The caller holds the lock
 * already, so the statement's snapshot is not older than the line. Answers
 * the state it joined in; null when it was in its line already.
 */
function* joinLine(gate: GateRow, key: string, row: DeliveryRowPlan): GateWork<"admitted" | "waiting" | null> {
  const { sql, params } = joinLineStatement(gate.workflow_id, key, row, null);
  const [joined] = yield* rowsOf<{ state: "admitted" | "waiting" }>(sql, params);
  // The position is taken even when the row was there already, as by the other branch.
  gate.next_position = Number(gate.next_position) + 1;
  return joined ? joined.state : null;
}

/** What a joinLineStatement answers: the state the delivery joined in (no row: it was in its line already). */
export interface JoinedRow {
  state: "admitted" | "waiting";
  /** With a delivery to write: whether its row was inserted (admitted, and not recorded before). */
  inserted?: boolean;
}

/**
 * joinLine's statement, for a caller that sends it with others (an append
 * in two round trips, append-in-two-trips.ts). The line's concurrency is
 * read from the gate row, which the caller's transaction has locked. With
 * `admittedRow`, that delivery row is written by the statement when it is
 * admitted (as the caller would write it: pending, or claimed).
 */
export function joinLineStatement(workflowId: string, key: string, row: DeliveryRowPlan, admittedRow: DeliveryRowPlan | null): Omit<GateStatement, "rows"> {
  const join = `taken AS (
       UPDATE workflow_gates SET next_position = next_position + 1 WHERE workflow_id = ? RETURNING next_position - 1 AS position
     ), line AS (
       SELECT NOT EXISTS (SELECT 1 FROM run_gate WHERE workflow_id = ? AND gate_key = ? AND state = 'waiting')
         AND (SELECT COUNT(*) FROM run_gate WHERE workflow_id = ? AND gate_key = ? AND state = 'admitted') < (SELECT g.concurrency FROM workflow_gates g WHERE g.workflow_id = ?) AS free
     )`;
  const insert = `INSERT INTO run_gate (workflow_id, emitter_id, event_id, owner_id, gate_key, position, state, subscription_id, channel, payload, indexed_at_ms, created_at)
     SELECT ?, ?, ?, ?, ?, taken.position, CASE WHEN line.free THEN 'admitted' ELSE 'waiting' END, ?, ?, ?, ?, ? FROM taken, line
     ON CONFLICT DO NOTHING RETURNING state`;
  const params = [
    workflowId,
    workflowId,
    key,
    workflowId,
    key,
    workflowId,
    row.listener_id,
    row.emitter_id,
    row.event_id,
    row.owner_id,
    key,
    row.subscription_id,
    row.channel,
    row.payload,
    row.indexed_at_ms,
    row.created_at,
  ];
  if (!admittedRow) return { sql: `WITH ${join} ${insert}`, params };
  const a = admittedRow;
  return {
    sql: `WITH ${join}, joined AS (${insert}), queued AS (
       INSERT INTO deliveries (listener_id, emitter_id, event_id, owner_id, subscription_id, channel, status, attempts, interruptions, claimed_by, available_at, created_at, payload, indexed_at_ms)
       SELECT ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::integer, ?::integer, ?::text, ?::bigint, ?::bigint, ?::text, ?::bigint
       FROM joined WHERE joined.state = 'admitted' ON CONFLICT DO NOTHING RETURNING 1
     )
     SELECT j.state, EXISTS (SELECT 1 FROM queued) AS inserted FROM joined j`,
    params: [
      ...params,
      ...[a.listener_id, a.emitter_id, a.event_id, a.owner_id, a.subscription_id, a.channel, a.status, a.attempts, a.interruptions, a.claimed_by, a.available_at, a.created_at, a.payload, a.indexed_at_ms],
    ],
  };
}

/** Whether the key's line of the gate has a free slot and nobody waiting in it. */
function* hasFreeSlot(gate: GateRow, key: string): GateWork<boolean> {
  // Followers (state `following`) are ahead in the line too.
  const waiting = yield* rowsOf("SELECT 1 AS one FROM run_gate WHERE workflow_id = ? AND gate_key = ? AND state IN ('waiting', 'following') LIMIT 1", [gate.workflow_id, key]);
  if (waiting.length > 0) return false;
  return (yield* admittedIn(gate.workflow_id, key)) < Number(gate.concurrency);
}

function* admittedIn(workflowId: string, key: string): GateWork<number> {
  const [count] = yield* rowsOf<{ n: number | string }>("SELECT COUNT(*) AS n FROM run_gate WHERE workflow_id = ? AND gate_key = ? AND state = 'admitted'", [workflowId, key]);
  return Number(count?.n ?? 0);
}

/**
 * PostgreSQL, a concurrency without a rate limit: the delivery rows of the
 * events a run's end admits are written by the statement that admits them
 * (a round trip less between two runs of a one-at-a-time line), claimed for
 * `claim` when given (they are due at once: no rate limit on this path).
 * `written` gets each such row, with whether its insert took (a row there
 * already is not the claimer's to run); the caller writes the others.
 */
export interface AdmittedWrites {
  claim: AdmissionClaim | undefined;
  /** Each row written, and whether its insert took. */
  written: Map<DeliveryRowPlan, boolean>;
}

type AdmissionClaim = { claimer: string | null; leaseMs: number };

/** What an admitted delivery's row records once claimed for `claim` (running, leased to its claimer). */
export function claimedState(claim: AdmissionClaim, now: number): Pick<DeliveryRowPlan, "status" | "attempts" | "available_at" | "claimed_by"> {
  return { status: "running", attempts: 1, available_at: now + claim.leaseMs, claimed_by: claim.claimer };
}

/** Run statuses that end a run: its slot is free again. A run waiting to retry (or delayed) still holds it. */
export const ENDED_RUN_STATUSES: ReadonlySet<string> = new Set(["success", "error", "exited", "cancelled"]);

/** The workflows whose gate rows a batch of recorded runs may free slots of (those with an ended run), in lock order. */
export function gatedWorkflowsOf(runs: Array<{ workflowId: string; status: string }>): string[] {
  return [...new Set(runs.filter((run) => ENDED_RUN_STATUSES.has(run.status)).map((run) => run.workflowId))].sort();
}

/**
 * A one-at-a-time line's chain, recorded (FinishRunsInput.chains): the
 * event its record admitted took the line's next waiting events as its
 * followers (`following`, see takeFollowers), and the process ran some of
 * them after it. Those it did not run go back to waiting with the record,
 * even when the gate was removed meanwhile.
 */
export interface LineChain {
  workflowId: string;
  /** The admitted event the followers follow. */
  headEventId: string;
  gateKey: string;
}

/**
 * Runs recorded: each ended run of an admitted delivery frees its slot, and
 * its line admits the next waiting ones (in arrival order) into the free
 * slots. Answers the delivery rows admitted, pending and due at their time
 * (the caller writes them, claimed when it hands them over at once).
 *
 * A follower's run (see LineChain) that ended leaves the line with it; one
 * that waits (a retry, a delay) holds the slot its head freed. The followers
 * of a head recorded or released that were not run wait again, in their
 * places, before they are admitted.
 */
export function* gateFinishedRuns(
  runs: Array<{ workflowId: string; emitterId: string; eventId: string; status: string }>,
  now: number,
  dialect: GateDialect = "sqlite",
  writes?: AdmittedWrites,
  /** The gate rows of gatedWorkflowsOf(runs), locked already by an earlier statement of the transaction (PostgreSQL's run insert). */
  locked?: Map<string, GateRow>,
  chains: readonly LineChain[] = [],
): GateWork<DeliveryRowPlan[]> {
  const ended = runs.filter((run) => ENDED_RUN_STATUSES.has(run.status));
  if (ended.length === 0 && chains.length === 0) return [];
  const chained = new Set(chains.map((chain) => chain.workflowId));
  const isHead = (run: EndedRun) => chains.some((chain) => chain.workflowId === run.workflowId && chain.headEventId === run.eventId);
  // One look per batch (a batch is one workflow's), which locks the gate rows it finds (taken first, as by every
  // admission): an ungated workflow's runs cost that one statement, a gated one's no second look to lock it.
  const gates = locked ?? (yield* lockGates([...ended.map((run) => run.workflowId), ...chained]));
  if (gates.size === 0 && chains.length === 0) return [];
  // PostgreSQL frees a line's slot and admits its next in one statement (freeAndAdmitNext), which must see the line
  // as the chain left it: those come after the chain's followers are out of the line or waiting again.
  const inOneStatement = (run: EndedRun): boolean => {
    const gate = gates.get(run.workflowId);
    return dialect === "postgres" && gate !== undefined && admitsInOneStatement(gate) && !(chained.has(run.workflowId) && !isHead(run));
  };
  const freed: Array<{ workflowId: string; key: string; eventId: string }> = [];
  const admitted: DeliveryRowPlan[] = [];
  for (const run of ended) {
    if ((!gates.has(run.workflowId) && !chained.has(run.workflowId)) || inOneStatement(run)) continue;
    const rows = yield* rowsOf<{ gate_key: string; state: string }>(
      "DELETE FROM run_gate WHERE workflow_id = ? AND emitter_id = ? AND event_id = ? AND state IN ('admitted', 'following') RETURNING gate_key, state",
      [run.workflowId, run.emitterId, run.eventId],
    );
    if (rows[0]?.state === "admitted") freed.push({ workflowId: run.workflowId, key: rows[0].gate_key, eventId: run.eventId });
  }
  if (chains.length > 0) {
    for (const run of runs) {
      if (ENDED_RUN_STATUSES.has(run.status) || !chained.has(run.workflowId)) continue;
      yield* change("UPDATE run_gate SET state = 'admitted', follows = NULL WHERE workflow_id = ? AND emitter_id = ? AND event_id = ? AND state = 'following'", [
        run.workflowId,
        run.emitterId,
        run.eventId,
      ]);
    }
  }
  // Followers exist only in one-at-a-time lines (or lines that were one when they were taken: a chain says so).
  const heads = new Map<string, { workflowId: string; key: string; eventId: string }>();
  for (const slot of freed) if (mayHaveFollowers(gates.get(slot.workflowId))) heads.set(JSON.stringify([slot.workflowId, slot.eventId]), slot);
  for (const chain of chains) heads.set(JSON.stringify([chain.workflowId, chain.headEventId]), { workflowId: chain.workflowId, key: chain.gateKey, eventId: chain.headEventId });
  for (const head of heads.values()) yield* releaseFollowers(head.workflowId, head.key, head.eventId);
  for (const run of ended) {
    if (!inOneStatement(run)) continue;
    // A head recorded without its chain (run again after its process died): its followers wait again first.
    if (!isHead(run) && mayHaveFollowers(gates.get(run.workflowId))) yield* releaseFollowersOfAdmitted(run);
    admitted.push(...(yield* freeAndAdmitNext(run, now, writes)));
  }
  const lines = new Map<string, { workflowId: string; key: string }>();
  for (const slot of freed) lines.set(JSON.stringify([slot.workflowId, slot.key]), slot);
  // A chain's line admits into what its slots allow now (its head may still hold one, waiting to retry); one whose
  // gate was removed while the chain ran sends what waits in it, as the removal sent the rest.
  for (const chain of chains) lines.set(JSON.stringify([chain.workflowId, chain.gateKey]), { workflowId: chain.workflowId, key: chain.gateKey });
  for (const line of lines.values()) admitted.push(...(yield* admitWaiting(gates.get(line.workflowId) ?? null, line.workflowId, line.key, now)));
  return admitted;
}

/** Whether a line of this gate may hold followers: one at a time (a gate removed since is a chain's to tell). */
function mayHaveFollowers(gate: GateRow | undefined): boolean {
  return gate !== undefined && Number(gate.concurrency) === 1;
}

/** The followers of a line's admitted event, before its slot is freed, wait again (PostgreSQL's freeAndAdmitNext then sees them). */
function* releaseFollowersOfAdmitted(run: EndedRun): GateWork<number> {
  return yield* change(
    `UPDATE run_gate SET state = 'waiting', follows = NULL WHERE workflow_id = ? AND state = 'following' AND follows = ?
       AND gate_key IN (SELECT a.gate_key FROM run_gate a WHERE a.workflow_id = ? AND a.emitter_id = ? AND a.event_id = ? AND a.state = 'admitted')`,
    [run.workflowId, run.eventId, run.workflowId, run.emitterId, run.eventId],
  );
}

/**
 * How many waiting events an admitted one of a one-at-a-time line takes as
 * its followers. A chain's runs share one record (one commit, one gate lock)
 * where each run had its own; more would hold the line's callers' answers
 * longer for little (the benchmark's 32 callers keep about 31 waiting).
 */
export const FOLLOWERS_PER_ADMISSION = 16;

/** Whether an admission under this gate row may take followers (takeFollowers decides; undefined: not known here). */
export function mayTakeFollowers(gate: GateRow | undefined): boolean {
  return gate === undefined || (Number(gate.concurrency) === 1 && gate.rate_runs === null);
}

/** A follower taken (takeFollowers): its waiting row, now `following`. */
export type TakenFollower = WaitingRow & { position: number | string; gate_key: string };

/**
 * A one-at-a-time line's next waiting events (at most FOLLOWERS_PER_ADMISSION)
 * taken by its admitted event `head` as its followers, in line order; none
 * for a line of more than one slot or under a rate limit (a rate limit times
 * each start). The caller hands them over with the head, claimed.
 */
export function* takeFollowers(head: { listenerId: string; emitterId: string; eventId: string }): GateWork<TakenFollower[]> {
  const taken = yield* rowsOf<TakenFollower>(
    `UPDATE run_gate SET state = 'following', follows = ?
     WHERE (workflow_id, emitter_id, event_id) IN (
       SELECT w.workflow_id, w.emitter_id, w.event_id FROM run_gate a
       JOIN workflow_gates g ON g.workflow_id = a.workflow_id AND g.concurrency = 1 AND g.rate_runs IS NULL
       JOIN run_gate w ON w.workflow_id = a.workflow_id AND w.gate_key = a.gate_key AND w.state = 'waiting'
       WHERE a.workflow_id = ? AND a.emitter_id = ? AND a.event_id = ? AND a.state = 'admitted'
       ORDER BY w.position LIMIT CAST(? AS INTEGER))
     RETURNING *`,
    [head.eventId, head.listenerId, head.emitterId, head.eventId, FOLLOWERS_PER_ADMISSION],
  );
  return taken.sort((a, b) => Number(a.position) - Number(b.position));
}

/**
 * An embedded server starting (nothing of its runs goes on): every follower
 * waits again, and its line admits what its slots allow (a line whose gate
 * was removed meanwhile sends all it holds). Answers the rows admitted.
 */
export function* releaseAllFollowers(now: number): GateWork<DeliveryRowPlan[]> {
  // One whose delivery was recorded (it waited to retry; the stop came before its chain's record) holds a slot, as
  // its record would have made it: it runs again from that row, and is not admitted a second time.
  const released = yield* rowsOf<{ workflow_id: string; gate_key: string }>(
    `UPDATE run_gate SET follows = NULL, state = CASE WHEN EXISTS (
       SELECT 1 FROM deliveries d WHERE d.listener_id = run_gate.workflow_id AND d.emitter_id = run_gate.emitter_id AND d.event_id = run_gate.event_id
     ) THEN 'admitted' ELSE 'waiting' END
     WHERE state = 'following' RETURNING workflow_id, gate_key`,
    [],
  );
  if (released.length === 0) return [];
  const lines = new Map(released.map((row) => [JSON.stringify([row.workflow_id, row.gate_key]), row]));
  const gates = yield* lockGates(released.map((row) => row.workflow_id));
  const admitted: DeliveryRowPlan[] = [];
  for (const line of lines.values()) admitted.push(...(yield* admitWaiting(gates.get(line.workflow_id) ?? null, line.workflow_id, line.gate_key, now)));
  return admitted;
}

/**
 * Heads whose process died mid-chain, their deliveries taken over (the relay
 * queues a lease that ran out): their chains' unrun followers wait again, and
 * their lines admit what their slots allow. The head's run again releases
 * them too, but only through its gate: with the concurrency removed
 * meanwhile there is none, and this is what sends them. Answers the rows
 * admitted (pending, for a claimer).
 */
export function* releaseFollowersOfHeads(heads: ReadonlyArray<{ workflowId: string; eventId: string }>, now: number): GateWork<DeliveryRowPlan[]> {
  const lines = new Map<string, { workflowId: string; key: string }>();
  for (const head of heads) {
    const released = yield* rowsOf<{ gate_key: string }>("UPDATE run_gate SET state = 'waiting', follows = NULL WHERE workflow_id = ? AND state = 'following' AND follows = ? RETURNING gate_key", [head.workflowId, head.eventId]);
    for (const row of released) lines.set(JSON.stringify([head.workflowId, row.gate_key]), { workflowId: head.workflowId, key: row.gate_key });
  }
  if (lines.size === 0) return [];
  const gates = yield* lockGates([...lines.values()].map((line) => line.workflowId));
  const admitted: DeliveryRowPlan[] = [];
  for (const line of lines.values()) admitted.push(...(yield* admitWaiting(gates.get(line.workflowId) ?? null, line.workflowId, line.key, now)));
  return admitted;
}

/** The followers of an admitted event it did not run wait again, in their places (nothing when it had none). */
function* releaseFollowers(workflowId: string, key: string, headEventId: string): GateWork<number> {
  return yield* change("UPDATE run_gate SET state = 'waiting', follows = NULL WHERE workflow_id = ? AND gate_key = ? AND state = 'following' AND follows = ?", [workflowId, key, headEventId]);
}

/**
 * PostgreSQL: one ended run's slot freed and its line's next waiting events
 * admitted into the free slots, in one statement where the steps below take
 * four round trips (a one-at-a-time line pays them between every two runs:
 * about 1.5 ms of its cycle on loopback, under load). A concurrency without
 * a rate limit only: a rate limit's due times are computed here, one
 * admission at a time.
 */
function* freeAndAdmitNext(run: EndedRun, now: number, writes?: AdmittedWrites): GateWork<DeliveryRowPlan[]> {
  const { sql, params } = freeAndAdmitStatement(run, now, writes);
  return admittedByStatement(yield* rowsOf<PromotedRow>(sql, params), now, writes);
}

type EndedRun = { workflowId: string; emitterId: string; eventId: string };
/** A row of a freeAndAdmitStatement's answer: the event admitted, and whether the statement wrote its delivery. */
export type PromotedRow = WaitingRow & { position: number | string; inserted?: boolean };

/** Whether an ended run's slot is freed and its line's next admitted by freeAndAdmitStatement: a concurrency without a rate limit. */
export function admitsInOneStatement(gate: GateRow): boolean {
  return gate.concurrency !== null && gate.rate_runs === null;
}

/**
 * The statement of freeAndAdmitNext, for a caller that sends it along with
 * others (finishRuns in one round trip). Its sub-statements see one
 * snapshot, taken before the DELETE: the line's admitted count still holds
 * the freed row (hence the - 1). The concurrency is read from the gate row,
 * which the caller's transaction has locked. With `writes`, the admitted
 * deliveries' rows are inserted by it too (claimed for `writes.claim`).
 */
export function freeAndAdmitStatement(run: EndedRun, now: number, writes?: AdmittedWrites): Omit<GateStatement, "rows"> {
  const lineSteps = `freed AS (
       DELETE FROM run_gate WHERE workflow_id = ? AND emitter_id = ? AND event_id = ? AND state = 'admitted' RETURNING gate_key
     ), line AS (
       SELECT f.gate_key, (SELECT g.concurrency FROM workflow_gates g WHERE g.workflow_id = ?) - ((SELECT COUNT(*) FROM run_gate a WHERE a.workflow_id = ? AND a.gate_key = f.gate_key AND a.state = 'admitted') - 1) AS free
       FROM freed f
     ), next AS (
       SELECT w.emitter_id, w.event_id FROM run_gate w JOIN line ON w.gate_key = line.gate_key
       WHERE w.workflow_id = ? AND w.state = 'waiting' ORDER BY w.position LIMIT GREATEST((SELECT free FROM line), 0)
     )`;
  const promote = `UPDATE run_gate u SET state = 'admitted' FROM next
     WHERE u.workflow_id = ? AND u.emitter_id = next.emitter_id AND u.event_id = next.event_id RETURNING u.*`;
  const lineParams = [run.workflowId, run.emitterId, run.eventId, run.workflowId, run.workflowId, run.workflowId, run.workflowId];
  if (!writes) return { sql: `WITH ${lineSteps} ${promote}`, params: lineParams };
  const state = admittedState(writes, now);
  return {
    sql: `WITH ${lineSteps}, promoted AS (${promote}), queued AS (
       INSERT INTO deliveries (listener_id, emitter_id, event_id, owner_id, subscription_id, channel, status, attempts, interruptions, claimed_by, available_at, created_at, payload, indexed_at_ms)
       SELECT workflow_id, emitter_id, event_id, owner_id, subscription_id, channel, ?::text, ?::integer, 0, ?::text, ?::bigint, created_at, COALESCE(payload, 'null'), COALESCE(indexed_at_ms, created_at)
       FROM promoted ON CONFLICT DO NOTHING RETURNING emitter_id, event_id
     )
     SELECT p.*, EXISTS (SELECT 1 FROM queued q WHERE q.emitter_id = p.emitter_id AND q.event_id = p.event_id) AS inserted FROM promoted p`,
    params: [...lineParams, state.status, state.attempts, state.claimed_by, state.available_at],
  };
}

/**
 * The delivery rows a freeAndAdmitStatement admitted, from its answer, in
 * line order; with `writes`, as its insert wrote them (pending and due
 * now, or running, leased to the claimer), each recorded in
 * `writes.written` with whether its insert took.
 */
export function admittedByStatement(promoted: readonly PromotedRow[], now: number, writes?: AdmittedWrites): DeliveryRowPlan[] {
  const inOrder = [...promoted].sort((a, b) => Number(a.position) - Number(b.position));
  if (!writes) return inOrder.map((waiter) => deliveryOf(waiter, now, now));
  const state = admittedState(writes, now);
  return inOrder.map((waiter) => {
    const row = Object.assign(deliveryOf(waiter, now, now), state);
    writes.written.set(row, waiter.inserted === true);
    return row;
  });
}

/** What an admitted row records when the admitting statement writes it: as deliveryOf and claimAdmitted make it. */
function admittedState(writes: AdmittedWrites, now: number): Pick<DeliveryRowPlan, "status" | "attempts" | "available_at" | "claimed_by"> {
  return writes.claim ? claimedState(writes.claim, now) : { status: "pending", attempts: 0, available_at: now, claimed_by: null };
}

/**
 * Admits the key's waiting events, oldest first, into its free slots (all
 * of them when the workflow has no concurrency any more). The gate row is
 * locked by the caller.
 */
function* admitWaiting(gate: GateRow | null, workflowId: string, key: string, now: number): GateWork<DeliveryRowPlan[]> {
  const limit = gate?.concurrency === null || gate?.concurrency === undefined ? Number.MAX_SAFE_INTEGER : Number(gate.concurrency);
  const free = limit - (yield* admittedIn(workflowId, key));
  if (free <= 0) return [];
  const waiting = yield* rowsOf<WaitingRow>(
    // The limit cast: better-sqlite3 binds a JS number as a REAL, and SQLite then read the line three to four times
    // slower (25 us against 7 for one of 31 waiting), between every two runs of a one-at-a-time line.
    "SELECT * FROM run_gate WHERE workflow_id = ? AND gate_key = ? AND state = 'waiting' ORDER BY position LIMIT CAST(? AS BIGINT)",
    // Without a concurrency (the gate removed): every waiting one, however many.
    [workflowId, key, free],
  );
  const admitted: DeliveryRowPlan[] = [];
  for (const waiter of waiting) {
    // Without a concurrency any more, nothing holds a slot: the row goes.
    if (limit === Number.MAX_SAFE_INTEGER) yield* change("DELETE FROM run_gate WHERE workflow_id = ? AND emitter_id = ? AND event_id = ?", [workflowId, waiter.emitter_id, waiter.event_id]);
    else yield* change("UPDATE run_gate SET state = 'admitted' WHERE workflow_id = ? AND emitter_id = ? AND event_id = ?", [workflowId, waiter.emitter_id, waiter.event_id]);
    const at = gate ? yield* rateSlot(gate, now) : now;
    admitted.push(deliveryOf(waiter, at, now));
  }
  return admitted;
}

/** The delivery row of an admitted event (pending, due at `at`; its creation time stays its arrival, for the queue's order). */
export function deliveryOf(waiter: WaitingRow, at: number, now: number): DeliveryRowPlan {
  return {
    listener_id: waiter.workflow_id,
    emitter_id: waiter.emitter_id,
    event_id: waiter.event_id,
    owner_id: waiter.owner_id,
    subscription_id: waiter.subscription_id,
    channel: waiter.channel,
    status: "pending",
    attempts: 0,
    interruptions: 0,
    claimed_by: null,
    available_at: Math.max(at, now),
    created_at: Number(waiter.created_at),
    payload: waiter.payload ?? "null",
    indexed_at_ms: Number(waiter.indexed_at_ms ?? waiter.created_at),
  };
}

/**
 * A workflow saved: its gate row follows its settings (`gate` null: it has
 * none), and its lines admit what the new settings let through (a raised
 * concurrency, or none: every waiting event). Answers the delivery rows
 * admitted (the caller writes them pending).
 */
export function* syncWorkflowGate(
  workflow: { id: string; ownerId: string },
  gate: { concurrency: number | null; concurrencyKey: string | null; rateLimit: { runs: number; perSeconds: number } | null } | null,
  now: number,
): GateWork<DeliveryRowPlan[]> {
  const [current] = yield* rowsOf<GateRow>("SELECT * FROM workflow_gates WHERE workflow_id = ?{lock}", [workflow.id]);
  if (!current && !gate) return [];
  if (gate) {
    const values = [gate.concurrency, gate.concurrencyKey, gate.rateLimit?.runs ?? null, gate.rateLimit ? gate.rateLimit.perSeconds * 1000 : null];
    if (current) yield* change("UPDATE workflow_gates SET concurrency = ?, concurrency_key = ?, rate_runs = ?, rate_per_ms = ? WHERE workflow_id = ?", [...values, workflow.id]);
    else yield* change("INSERT INTO workflow_gates (workflow_id, owner_id, concurrency, concurrency_key, rate_runs, rate_per_ms, rate_recent, next_position) VALUES (?, ?, ?, ?, ?, ?, NULL, 0)", [workflow.id, workflow.ownerId, ...values]);
  } else {
    yield* change("DELETE FROM workflow_gates WHERE workflow_id = ?", [workflow.id]);
    // No gate any more: the admitted hold no slot.
    yield* change("DELETE FROM run_gate WHERE workflow_id = ? AND state = 'admitted'", [workflow.id]);
  }
  const [locked] = gate ? yield* rowsOf<GateRow>("SELECT * FROM workflow_gates WHERE workflow_id = ?", [workflow.id]) : [];
  const keys = yield* rowsOf<{ gate_key: string }>("SELECT DISTINCT gate_key FROM run_gate WHERE workflow_id = ? AND state = 'waiting'", [workflow.id]);
  const admitted: DeliveryRowPlan[] = [];
  for (const { gate_key: key } of keys) admitted.push(...(yield* admitWaiting(locked ?? null, workflow.id, key, now)));
  if (locked && locked.concurrency === null) yield* change("DELETE FROM run_gate WHERE workflow_id = ? AND state = 'admitted'", [workflow.id]);
  return admitted;
}

/** A waiting (not yet admitted) event of a gated workflow, taken out of its line; null when it is not waiting (admitted, ran, or unknown). */
export function* takeWaiting(workflowId: string, eventId: string): GateWork<WaitingRow | null> {
  yield* lockGates([workflowId]);
  const [waiter] = yield* rowsOf<WaitingRow>("SELECT * FROM run_gate WHERE workflow_id = ? AND event_id = ? AND state = 'waiting' LIMIT 1", [workflowId, eventId]);
  if (!waiter) return null;
  yield* change("DELETE FROM run_gate WHERE workflow_id = ? AND emitter_id = ? AND event_id = ?", [workflowId, waiter.emitter_id, eventId]);
  return waiter;
}

/**
 * The admitted delivery rows a caller writes: those due now recorded claimed
 * by `claim` (the caller hands them over at once, as an append's), the
 * others pending until their time. Answers the claimed ones as a claim would.
 */
export function claimAdmitted(rows: DeliveryRowPlan[], claim: AdmissionClaim | undefined, now: number): DeliveryRowPlan[] {
  if (!claim) return [];
  const claimed: DeliveryRowPlan[] = [];
  for (const row of rows) {
    if (row.available_at > now) continue;
    Object.assign(row, claimedState(claim, now));
    claimed.push(row);
  }
  return claimed;
}

/**
 * The earliest due time of the admitted rows left pending for later (a rate
 * limit's); undefined when there are none. Not the claimed ones: their
 * `available_at` is their lease's end, and taken for a due time it woke an
 * idle claimer (the relay, on BullMQ; the worker, embedded) for nothing after
 * every run of a one-at-a-time line.
 */
export function admittedLaterAt(rows: DeliveryRowPlan[], now: number): number | undefined {
  return earliestDue(rows.filter((row) => row.status === "pending" && row.available_at > now));
}

/** The earliest due time of rows left pending for later; undefined when there are none. */
export function earliestDue(rows: DeliveryRowPlan[]): number | undefined {
  return rows.length === 0 ? undefined : Math.min(...rows.map((row) => row.available_at));
}
