import { describe, expect, it } from "vitest";
import { PUBLIC_REGISTRY, registryLocator } from "./registry-url.js";

describe("registryLocator", () => {
  it("uses the configured registry without asking npm", async () => {
    const locate = registryLocator({ configured: "http://127.0.0.1:4873/", askNpm: () => Promise.reject(new Error("asked")) });
    expect(await locate()).toBe("http://127.0.0.1:4873/");
  });

  it("asks npm once, and ends its answer with a slash", async () => {
    let asked = 0;
    const locate = registryLocator({ configured: null, askNpm: async () => (asked++, "https://npm.example.com/repo\n") });
    expect(await locate()).toBe("https://npm.example.com/repo/");
    expect(await locate()).toBe("https://npm.example.com/repo/");
    expect(asked).toBe(1);
  });

  it.each([
    ["npm is missing", () => Promise.reject(new Error("spawn npm ENOENT"))],
    ["npm answers nonsense", () => Promise.resolve("undefined\n")],
  ])("falls back to the public registry when %s", async (_case, askNpm) => {
    expect(await registryLocator({ configured: null, askNpm })()).toBe(PUBLIC_REGISTRY);
  });
});
