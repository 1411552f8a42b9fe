import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { cacheKeyOf, integrityOf, matchesIntegrity, parseIntegrity } from "./integrity.js";

const bytes = Buffer.from("a tarball");
const sha512 = `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
const sha1Hex = createHash("sha1").update(bytes).digest("hex");

describe("integrity", () => {
  it("checks bytes against sha512 and sha1", () => {
    expect(matchesIntegrity(bytes, sha512)).toBe(true);
    expect(matchesIntegrity(Buffer.from("another"), sha512)).toBe(false);
    expect(matchesIntegrity(bytes, integrityOf({ shasum: sha1Hex })!)).toBe(true);
    expect(matchesIntegrity(bytes, "md5-abc")).toBe(false);
  });

  it.each([
    [{ integrity: sha512, shasum: sha1Hex }, sha512],
    [{ shasum: sha1Hex }, `sha1-${Buffer.from(sha1Hex, "hex").toString("base64")}`],
    [{ integrity: "nonsense" }, null],
    [{}, null],
  ])("integrityOf(%j) → %s", (dist, expected) => expect(integrityOf(dist)).toBe(expected));

  it("picks the strongest of several hashes", () => {
    expect(parseIntegrity(`sha1-${Buffer.from(sha1Hex, "hex").toString("base64")} ${sha512}`)?.algorithm).toBe("sha512");
  });

  it("names cache folders without path characters", () => {
    const key = cacheKeyOf(sha512);
    expect(key).toMatch(/^sha512-[A-Za-z0-9_-]{86}$/);
    expect(() => cacheKeyOf("md5-x")).toThrow();
  });
});
