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

  it("spells the milliseconds in 10 base32 characters, most significant first", () => {
    const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
    for (const now of [0, 1, 31, 32, 1_700_000_000_000, 2 ** 50 - 1]) {
      let expected = "";
      for (let value = BigInt(now), i = 0; i < 10; i++, value >>= 5n) expected = alphabet[Number(value & 31n)] + expected;
      expect(newId("run", now).slice(4, 14)).toBe(expected);
    }
  });

  it("spends all 80 random bits: every random character takes every value", () => {
    const seen = Array.from({ length: 16 }, () => new Set<string>());
    for (let i = 0; i < 4_000; i++) [...newId("run", 0).slice(14)].forEach((ch, position) => seen[position]!.add(ch));
    expect(seen.map((values) => values.size)).toEqual(Array(16).fill(32));
  });

  it("rejects ids with a wrong length or alphabet", () => {
    expect(isIdOf("user", "u_short")).toBe(false);
    expect(isIdOf("user", `u_${"I".repeat(26)}`)).toBe(false);
  });
});
