import { describe, expect, it } from "vitest";
import { bundleCatalogComponent } from "../../src/catalog/bundle-catalog.js";

describe("catalog bundles", () => {
  it("bundles a catalog file into code with no package left to install", async () => {
    const bundle = await bundleCatalogComponent("helper_functions/actions/uuid/uuid.mjs");
    expect(bundle.code).toContain("helper_functions-uuid");
    expect(bundle.packages).toEqual([]);
    expect(bundle.code).not.toMatch(/require\("(?!node:)[^"]+"\)/);
  });
});
