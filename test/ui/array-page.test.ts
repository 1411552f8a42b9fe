import { describe, expect, it } from "vitest";
import { pageOfArray } from "../../ui/src/api/array-page.js";

/** PagedTable pages the lists the API answers whole (subscriptions, env, registry) through these cursors, as it pages the API's own. */
describe("pageOfArray: cursor pages over a whole list", () => {
  const all = Array.from({ length: 45 }, (_, index) => `item ${index}`);

  it("walks forward with after=end_cursor and back with before=start_cursor, as PagedTable asks", () => {
    const first = pageOfArray(all, { limit: 20 });
    expect(first.data).toEqual(all.slice(0, 20));
    expect(first.page_info).toEqual({ total_count: 45, count: 20, start_cursor: "0", end_cursor: "19" });

    const second = pageOfArray(all, { limit: 20, after: first.page_info.end_cursor! });
    expect(second.data).toEqual(all.slice(20, 40));
    const third = pageOfArray(all, { limit: 20, after: second.page_info.end_cursor! });
    expect(third.data).toEqual(all.slice(40));
    expect(third.page_info).toMatchObject({ count: 5, start_cursor: "40", end_cursor: "44" });

    expect(pageOfArray(all, { limit: 20, before: third.page_info.start_cursor! }).data).toEqual(all.slice(20, 40));
    expect(pageOfArray(all, { limit: 20, before: second.page_info.start_cursor! }).data).toEqual(all.slice(0, 20));
  });

  it("answers an empty list with no cursors", () => {
    expect(pageOfArray([], { limit: 20 })).toEqual({ page_info: { total_count: 0, count: 0, start_cursor: null, end_cursor: null }, data: [] });
  });
});
