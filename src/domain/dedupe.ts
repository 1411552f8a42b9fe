import { numericIdText, numericIdValue, type NumericId } from "./numeric-id.js";

/**
 * The dedupe strategies of a source (SEED "Source events"), applied to the
 * emits of one invocation. Pure: the state comes in and goes out as plain
 * JSON, which the caller stores between invocations.
 *
 * Ids are compared by their text, so the number 1 and the string "1" are the
 * same id (the API shows every emit id as a string anyway).
 */
export const DEDUPE_STRATEGIES = ["unique", "greatest", "last"] as const;
export type DedupeStrategy = (typeof DEDUPE_STRATEGIES)[number];

export function isDedupeStrategy(value: unknown): value is DedupeStrategy {
  return typeof value === "string" && (DEDUPE_STRATEGIES as readonly string[]).includes(value);
}

export const UNIQUE_CACHE_SIZE = 100;

/** One `this.$emit(event, meta)` call, in emit order. */
export interface PendingEmit {
  event: unknown;
  id?: string | number;
  name?: string;
  summary?: string;
  ts?: number;
}

/**
 * What a strategy remembers. It names its strategy so that state left by an
 * earlier version of the component with another strategy is ignored.
 */
export type DedupeState =
  | { strategy: "unique"; ids: string[] } // oldest first
  | { strategy: "greatest"; greatest: string | null } // canonical decimal text
  | { strategy: "last"; lastId: string | null };

export interface Rejection {
  emit: PendingEmit;
  reason: string;
  /** True for a duplicate the strategy dropped as it should; false for an emit that was wrong (no id, a non-numeric id). */
  duplicate: boolean;
}

export interface DedupeResult {
  accepted: PendingEmit[];
  state: DedupeState | null;
  rejected: Rejection[];
}

export function applyDedupe(
  strategy: DedupeStrategy | null,
  state: DedupeState | null,
  emits: PendingEmit[],
): DedupeResult {
  if (strategy === null) return { accepted: [...emits], state: null, rejected: [] };
  const rejected: Rejected[] = [];
  const withIds: Keyed = [];
  emits.forEach((emit, index) => {
    const problem = idProblem(emit.id, strategy);
    if (problem === null) withIds.push({ index, emit, key: String(emit.id) });
    else rejected.push({ index, emit, reason: problem, duplicate: false });
  });
  const outcome =
    strategy === "unique"
      ? dedupeUnique(state, withIds, rejected)
      : strategy === "greatest"
        ? dedupeGreatest(state, withIds, rejected)
        : dedupeLast(state, withIds, rejected);
  rejected.sort((a, b) => a.index - b.index);
  return { ...outcome, rejected: rejected.map(({ emit, reason, duplicate }) => ({ emit, reason, duplicate })) };
}

function idProblem(id: unknown, strategy: DedupeStrategy): string | null {
  if (id === undefined || id === null) {
    return `id is required when a dedupe strategy is set (this source uses "${strategy}"): pass one, as in this.$emit(event, { id }).`;
  }
  if (typeof id !== "string" && typeof id !== "number") return "id must be a string or a number.";
  return null;
}

/** Emits that carry a usable id, with their position in the batch (rejections are reported in emit order). */
type Keyed = Array<{ index: number; emit: PendingEmit; key: string }>;
type Rejected = Rejection & { index: number };
type Outcome = { accepted: PendingEmit[]; state: DedupeState };

function dedupeUnique(state: DedupeState | null, emits: Keyed, rejected: Rejected[]): Outcome {
  const cached = state?.strategy === "unique" ? state.ids.filter((id) => typeof id === "string") : [];
  // A Set keeps insertion order, which is the FIFO order of the cache.
  const cache = new Set(cached.slice(-UNIQUE_CACHE_SIZE));
  const accepted: PendingEmit[] = [];
  for (const { index, emit, key } of emits) {
    if (cache.has(key)) {
      rejected.push({ index, emit, duplicate: true, reason: `id "${key}" was already emitted (dedupe "unique" remembers the last ${UNIQUE_CACHE_SIZE} ids).` });
      continue;
    }
    accepted.push(emit);
    cache.add(key);
    if (cache.size > UNIQUE_CACHE_SIZE) cache.delete(cache.values().next().value as string);
  }
  return { accepted, state: { strategy: "unique", ids: [...cache] } };
}

function dedupeGreatest(state: DedupeState | null, emits: Keyed, rejected: Rejected[]): Outcome {
  let greatest: NumericId | null = state?.strategy === "greatest" ? numericIdValue(state.greatest) : null;
  const accepted: PendingEmit[] = [];
  for (const { index, emit, key } of emits) {
    const value = numericIdValue(emit.id);
    if (value === null) {
      rejected.push({ index, emit, duplicate: false, reason: `id "${key}" is not numeric: dedupe "greatest" needs numeric ids (a number, or a string of digits such as "42").` });
    } else if (greatest !== null && !(value > greatest)) {
      rejected.push({ index, emit, duplicate: true, reason: `id ${key} is not greater than ${numericIdText(greatest)}, the greatest id emitted so far (dedupe "greatest").` });
    } else {
      accepted.push(emit);
      greatest = value;
    }
  }
  return { accepted, state: { strategy: "greatest", greatest: greatest === null ? null : numericIdText(greatest) } };
}

function dedupeLast(state: DedupeState | null, emits: Keyed, rejected: Rejected[]): Outcome {
  const lastId = state?.strategy === "last" && typeof state.lastId === "string" ? state.lastId : null;
  // Everything up to the last occurrence of the cached id was emitted before.
  let cut = -1;
  emits.forEach(({ key }, position) => {
    if (key === lastId) cut = position;
  });
  const accepted: PendingEmit[] = [];
  emits.forEach(({ index, emit, key }, position) => {
    if (position <= cut) rejected.push({ index, emit, duplicate: true, reason: `id "${key}" comes at or before "${lastId}", the last event emitted (dedupe "last").` });
    else accepted.push(emit);
  });
  const newest = newestOf(accepted);
  return { accepted, state: { strategy: "last", lastId: newest === undefined ? lastId : String(newest.id) } };
}

/** The emit with the newest ts (the later one on a tie); without any ts, the last one. */
function newestOf(emits: PendingEmit[]): PendingEmit | undefined {
  let newest: PendingEmit | undefined;
  for (const emit of emits) {
    if (typeof emit.ts === "number" && (typeof newest?.ts !== "number" || emit.ts >= newest.ts)) newest = emit;
  }
  return newest ?? emits[emits.length - 1];
}
