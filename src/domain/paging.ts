import { ValidationError } from "./errors.js";

/**
 * Cursor paging, as the hosted API pages lists: newest first; cursors are item
 * ids. `after=<end_cursor>` gives the next (older) page, `before=<start_cursor>`
 * the previous (newer) one, both in the same newest-first order.
 */
export interface PageRequest {
  readonly limit: number;
  readonly before?: string | undefined;
  readonly after?: string | undefined;
}

export interface PageInfo {
  total_count: number;
  count: number;
  start_cursor: string | null;
  end_cursor: string | null;
}

export interface Page<T> {
  page_info: PageInfo;
  data: T[];
}

/** What a store returns for one page: the items in list order and the total. */
export interface PageSlice<T> {
  items: T[];
  totalCount: number;
}

export const DEFAULT_PAGE_LIMIT = 10;
export const MAX_PAGE_LIMIT = 100;

export interface RawPageQuery {
  limit?: number | string | undefined;
  before?: string | undefined;
  after?: string | undefined;
}

/** Validates paging query parameters; an error names the parameter. */
export function parsePageRequest(raw: RawPageQuery): PageRequest {
  let limit = DEFAULT_PAGE_LIMIT;
  if (raw.limit !== undefined && raw.limit !== "") {
    limit = typeof raw.limit === "number" ? raw.limit : Number(raw.limit);
    if (!Number.isInteger(limit) || limit < 1) {
      throw new ValidationError("limit", `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}; got "${raw.limit}".`);
    }
    // More than the maximum is taken as the maximum, as the hosted API does: clients ask for 1,000 and page on.
    limit = Math.min(limit, MAX_PAGE_LIMIT);
  }
  const before = raw.before || undefined;
  const after = raw.after || undefined;
  if (before && after) {
    throw new ValidationError("before", "Give either before or after, not both.");
  }
  return { limit, before, after };
}

export function toPage<T>(slice: PageSlice<T>, cursorOf: (item: T) => string): Page<T> {
  const first = slice.items[0];
  const last = slice.items[slice.items.length - 1];
  return {
    page_info: {
      total_count: slice.totalCount,
      count: slice.items.length,
      start_cursor: first === undefined ? null : cursorOf(first),
      end_cursor: last === undefined ? null : cursorOf(last),
    },
    data: slice.items,
  };
}
