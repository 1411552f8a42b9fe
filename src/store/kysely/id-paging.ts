import type { PageRequest, PageSlice } from "../../domain/paging.js";

/** Where a page starts, relative to a cursor id, and in which order to read. */
export interface IdWindow {
  cursor: { op: "<" | ">"; id: string } | null;
  order: "asc" | "desc";
  limit: number;
}

/**
 * Reads one newest-first page of rows whose ids sort by creation time.
 * `after` reads older rows (id < cursor, descending); `before` reads newer rows
 * (id > cursor, ascending, then reversed), so both pages come out newest first.
 */
export async function readIdPage<Row>(
  page: PageRequest,
  readWindow: (window: IdWindow) => Promise<Row[]>,
  countAll: () => Promise<number>,
): Promise<PageSlice<Row>> {
  let rows: Row[];
  if (page.before) {
    rows = (await readWindow({ cursor: { op: ">", id: page.before }, order: "asc", limit: page.limit })).reverse();
  } else {
    const cursor = page.after ? { op: "<" as const, id: page.after } : null;
    rows = await readWindow({ cursor, order: "desc", limit: page.limit });
  }
  return { items: rows, totalCount: await countAll() };
}
