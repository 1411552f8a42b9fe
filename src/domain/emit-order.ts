import { describeValue } from "./describe-value.js";

/**
 * Rules for the second argument of `this.$emit(event, { id, name, summary, ts })`
 * (SEED "Source event emission").
 */
export interface EmitMeta {
  id?: string | number;
  name?: string;
  summary?: string;
  ts?: number;
}

/** Channels starting with this belong to the platform (`$errors`, `$logs`). */
export const RESERVED_CHANNEL_PREFIX = "$";

/**
 * Emits in the order they are published: when any emit carries `ts`, oldest
 * to newest (SEED); otherwise as emitted.
 *
 * An emit without `ts` sorts as if stamped with the greatest ts of the emits
 * before it (or before everything, when none came before it has one). So it
 * never overtakes an emit made before it, and emits made after it with an
 * older ts still move ahead of it. The sort is stable: equal stamps keep emit
 * order. The input is not changed.
 */
export function orderEmits<T extends { ts?: number | undefined }>(emits: readonly T[]): T[] {
  if (!emits.some((emit) => isTimestamp(emit.ts))) return [...emits];
  let latest = Number.NEGATIVE_INFINITY;
  const stamped = emits.map((emit) => {
    if (isTimestamp(emit.ts)) latest = Math.max(latest, emit.ts);
    return { emit, at: isTimestamp(emit.ts) ? emit.ts : latest };
  });
  return stamped.sort((a, b) => a.at - b.at).map(({ emit }) => emit);
}

function isTimestamp(ts: unknown): ts is number {
  return typeof ts === "number" && Number.isFinite(ts);
}

/**
 * Why `meta` is not valid emit metadata, or null when it is. Absent fields (or
 * null ones) are fine, and so is no metadata at all; fields this API does not
 * know are left alone, as the hosted service leaves them.
 */
export function validateEmitMeta(meta: unknown): string | null {
  if (meta === undefined || meta === null) return null;
  if (typeof meta !== "object" || Array.isArray(meta)) {
    return `The second argument of $emit must be an object like { id, name, summary, ts }; got ${describeValue(meta)}.`;
  }
  const { id, name, summary, ts } = meta as Record<string, unknown>;
  if (id !== undefined && id !== null) {
    const ok = (typeof id === "string" && id !== "") || (typeof id === "number" && Number.isFinite(id));
    if (!ok) return `id must be a non-empty string or a finite number; got ${describeValue(id)}.`;
  }
  if (name !== undefined && name !== null) {
    if (typeof name !== "string") return `name (the channel) must be a string; got ${describeValue(name)}.`;
    if (name.startsWith(RESERVED_CHANNEL_PREFIX)) {
      return `name "${name}" is reserved: channels starting with "$" ($errors, $logs) belong to the platform. Pick another channel name.`;
    }
  }
  if (summary !== undefined && summary !== null && typeof summary !== "string") {
    return `summary must be a string; got ${describeValue(summary)}.`;
  }
  if (ts !== undefined && ts !== null) {
    if (typeof ts !== "number" || !Number.isInteger(ts) || ts < 0) {
      return `ts must be epoch milliseconds as a whole number of at least 0 (Date.now() gives one); got ${describeValue(ts)}.`;
    }
  }
  return null;
}
