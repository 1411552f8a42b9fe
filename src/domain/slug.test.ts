import { describe, expect, it } from "vitest";
import { MAX_SLUG_LENGTH, slugify, uniqueSlug } from "./slug.js";

describe("slugify", () => {
  it.each([
    ["New Orders", "new-orders"],
    ["  GitHub: new issue!! ", "github-new-issue"],
    ["a__b--c", "a-b-c"],
    ["Café Crème", "cafe-creme"],
    ["RSS 2.0 feed", "rss-2-0-feed"],
    ["", "source"],
    ["!!!", "source"],
    ["日本語", "source"],
    ["x".repeat(80), "x".repeat(60)],
    [`${"a".repeat(59)} b`, "a".repeat(59)],
  ])("%j → %j", (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });

  it("never exceeds the maximum length", () => {
    expect(slugify("word ".repeat(40)).length).toBeLessThanOrEqual(MAX_SLUG_LENGTH);
  });
});

describe("uniqueSlug", () => {
  it.each([
    ["free", "orders", [], "orders"],
    ["taken once", "orders", ["orders"], "orders-1"],
    ["taken with -1", "orders", ["orders", "orders-1"], "orders-2"],
    ["a gap is reused", "orders", ["orders", "orders-2"], "orders-1"],
    ["others do not matter", "orders", ["orders-1"], "orders"],
  ])("%s", (_title, base, taken, expected) => {
    expect(uniqueSlug(base, new Set(taken))).toBe(expected);
  });

  it("shortens the base to make room for the suffix", () => {
    const base = "a".repeat(MAX_SLUG_LENGTH);
    const slug = uniqueSlug(base, new Set([base]));
    expect(slug).toBe(`${"a".repeat(MAX_SLUG_LENGTH - 2)}-1`);
  });

  it("does not leave a double dash when shortening cuts at one", () => {
    const base = `${"a".repeat(57)}-bb`;
    expect(uniqueSlug(base, new Set([base]))).toBe(`${"a".repeat(57)}-1`);
  });
});
