import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isSealed, SecretBox } from "./secrets.js";

describe("SecretBox", () => {
  const box = new SecretBox(randomBytes(32));

  it("seals and opens a value, never the same ciphertext twice", () => {
    const a = box.seal("hunter2");
    const b = box.seal("hunter2");
    expect(isSealed(a)).toBe(true);
    expect(a).not.toContain("hunter2");
    expect(a).not.toBe(b);
    expect(box.open(a)).toBe("hunter2");
  });

  it("refuses a value sealed with another key, or tampered with", () => {
    const sealed = box.seal("s");
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow(/master key/);
    const flipped = sealed.at(-2) === "A" ? "B" : "A";
    const tampered = `${sealed.slice(0, -2)}${flipped}${sealed.slice(-1)}`;
    expect(() => box.open(tampered)).toThrow();
  });
});
