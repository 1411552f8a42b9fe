import { describe, expect, it } from "vitest";
import { isIdOf, newId } from "./ids.js";

describe("newId", () => {
  it("starts with the kind's prefix and is recognised as that kind only", () => {
    const id = newId("user");
    expect(id).toMatch(/^u_[0-9a-z]{26}$/);
    expect(isIdOf("user", id)).toBe(true);
    expect(isIdOf("apiKey", id)).toBe(false);
  });

  it("sorts by creation time", () => {
    const older = newId("apiKey", 1_700_000_000_000);
    const newer = newId("apiKey", 1_700_000_000_001);
    expect(older < newer).toBe(true);
  });

  it("never repeats", () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId("workflow", 0)));
    expect(ids.size).toBe(10_000);
  });

  it("rejects ids with a wrong length or alphabet", () => {
    expect(isIdOf("user", "u_short")).toBe(false);
    expect(isIdOf("user", `u_${"I".repeat(26)}`)).toBe(false);
  });
});
