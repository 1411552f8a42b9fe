import { describe, expect, it } from "vitest";
import { ValidationError } from "./errors.js";
import { parsePageRequest, toPage } from "./paging.js";

describe("parsePageRequest", () => {
  it.each([
    [{}, { limit: 10, before: undefined, after: undefined }],
    [{ limit: "1" }, { limit: 1, before: undefined, after: undefined }],
    [{ limit: 100, after: "x" }, { limit: 100, before: undefined, after: "x" }],
    // Over the maximum: the maximum, as the hosted API answers.
    [{ limit: "101" }, { limit: 100, before: undefined, after: undefined }],
    [{ limit: 5000 }, { limit: 100, before: undefined, after: undefined }],
    [{ before: "y", after: "" }, { limit: 10, before: "y", after: undefined }],
  ])("accepts %j", (raw, expected) => {
    expect(parsePageRequest(raw)).toEqual(expected);
  });

  it.each([
    [{ limit: "0" }, "limit"],
    [{ limit: "-3" }, "limit"],
    [{ limit: "2.5" }, "limit"],
    [{ limit: "ten" }, "limit"],
    [{ before: "a", after: "b" }, "before"],
  ])("rejects %j naming %s", (raw, field) => {
    try {
      parsePageRequest(raw);
      expect.unreachable("parsePageRequest should have thrown");
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe(field);
    }
  });
});

describe("toPage", () => {
  it("takes cursors from the first and last items", () => {
    const page = toPage({ items: [{ id: "c" }, { id: "b" }], totalCount: 3 }, (item) => item.id);
    expect(page.page_info).toEqual({ total_count: 3, count: 2, start_cursor: "c", end_cursor: "b" });
  });

  it("has null cursors for an empty page", () => {
    const page = toPage({ items: [], totalCount: 0 }, (item: { id: string }) => item.id);
    expect(page.page_info).toEqual({ total_count: 0, count: 0, start_cursor: null, end_cursor: null });
  });
});
