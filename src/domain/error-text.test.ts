import { describe, expect, it } from "vitest";
import { cutAtWord, errorHeadline, withoutErrorPrefix } from "./error-text.js";

describe("error text", () => {
  it("never doubles an Error: prefix", () => {
    expect(errorHeadline("Error", "kaput")).toBe("kaput");
    expect(errorHeadline("TypeError", "x is not a function")).toBe("TypeError: x is not a function");
    expect(errorHeadline("TypeError", "TypeError: x is not a function")).toBe("TypeError: x is not a function");
    expect(errorHeadline(null, "Error: Error: kaput")).toBe("kaput");
    expect(withoutErrorPrefix("Error: the disk")).toBe("the disk");
  });

  it("cuts long text at a word, never inside one", () => {
    expect(cutAtWord("short", 10)).toBe("short");
    const cut = cutAtWord("the quick brown fox jumps over the lazy dog", 20);
    expect(cut).toBe("the quick brown fox…");
    expect(cut.length).toBeLessThanOrEqual(20);
    expect(cutAtWord("x".repeat(30), 10)).toBe(`${"x".repeat(9)}…`);
  });
});
