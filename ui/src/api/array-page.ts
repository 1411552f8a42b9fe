// ".js": also compiled by the project's own tsc, for its unit test (test/ui/array-page.test.ts).
import type { Page, PageParams } from "./types.js";

/**
 * One page of a list the API answers whole (subscriptions, env, registry),
 * shaped as the API's cursor pages so that PagedTable pages it the same way.
 * The cursors are positions in the list.
 */
export function pageOfArray<T>(all: T[], params: PageParams): Page<T> {
  const limit = params.limit ?? 20;
  let start = 0;
  if (params.after !== undefined) start = Number(params.after) + 1;
  else if (params.before !== undefined) start = Math.max(0, Number(params.before) - limit);
  const end = params.before !== undefined ? Math.min(Number(params.before), start + limit) : start + limit;
  const data = all.slice(start, end);
  return {
    page_info: {
      total_count: all.length,
      count: data.length,
      start_cursor: data.length > 0 ? String(start) : null,
      end_cursor: data.length > 0 ? String(start + data.length - 1) : null,
    },
    data,
  };
}
