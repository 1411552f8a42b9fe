/**
 * The hosted API's common `include` and `exclude` parameters: comma-separated
 * field names that keep or drop top-level fields of what a read answers in
 * `data` (the object, or each item of the list). Other fields of the answer
 * (`page_info`) stay.
 */
export interface FieldSelection {
  include: Set<string> | null;
  exclude: Set<string> | null;
}

function names(value: string | null): Set<string> | null {
  if (value === null) return null;
  const fields = value.split(",").map((name) => name.trim()).filter((name) => name !== "");
  return fields.length > 0 ? new Set(fields) : null;
}

/** The selection a request's query asks for, or null when it asks for none. */
export function fieldSelectionOf(url: string): FieldSelection | null {
  const query = url.indexOf("?");
  if (query < 0) return null;
  const params = new URLSearchParams(url.slice(query + 1));
  const selection = { include: names(params.get("include")), exclude: names(params.get("exclude")) };
  return selection.include || selection.exclude ? selection : null;
}

function select(item: unknown, selection: FieldSelection): unknown {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return item;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) {
    if (selection.include && !selection.include.has(name)) continue;
    if (selection.exclude?.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** The answer with `data` (or each item of it) narrowed to the selection. */
export function applyFieldSelection(payload: unknown, selection: FieldSelection): unknown {
  if (typeof payload !== "object" || payload === null || !("data" in payload)) return payload;
  const { data } = payload as { data: unknown };
  return { ...payload, data: Array.isArray(data) ? data.map((item) => select(item, selection)) : select(data, selection) };
}
