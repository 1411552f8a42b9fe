import { describe, expect, it } from "vitest";
import { copyOwn } from "./own-copy.js";

describe("copyOwn", () => {
  it("copies own enumerable keys as a spread does, into a new object", () => {
    const source = { a: 1, b: { nested: true }, c: undefined };
    const copy = copyOwn(source);
    expect(copy).toEqual({ a: 1, b: { nested: true }, c: undefined });
    expect(copy).not.toBe(source);
    expect(copy.b).toBe(source.b);
    expect(Object.keys(copy)).toEqual(["a", "b", "c"]);
    copy.a = 2;
    expect(source.a).toBe(1);
  });

  it("keeps a key __proto__ from JSON as an own property, leaving the prototype alone", () => {
    const source = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const copy = copyOwn(source);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(["__proto__", "x"]);
    expect(Object.getOwnPropertyDescriptor(copy, "__proto__")?.value).toEqual({ polluted: true });
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    // What Object.assign would have done instead: the key is gone, the prototype changed.
    const assigned = Object.assign({}, source);
    expect(Object.keys(assigned)).toEqual(["x"]);
    expect((assigned as { polluted?: unknown }).polluted).toBe(true);
    expect(JSON.stringify(copy)).toBe(JSON.stringify({ ...source }));
  });
});
