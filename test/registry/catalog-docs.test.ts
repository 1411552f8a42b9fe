import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPOSITORY_ROOT } from "../../src/catalog/bundle-catalog.js";
import { loadCatalog } from "../../src/catalog/load-catalog.js";
import { REGISTRY_DOCS_COMMAND, renderRegistryDocs } from "../../src/catalog/registry-docs.js";

const FIXTURE_CATALOG = resolve(import.meta.dirname, "fixtures", "catalog");

describe("docs/registry.md", () => {
  it("builds from every catalog component: none fails to load or breaks the rules", async () => {
    const catalog = await loadCatalog();
    const failures = catalog.failures.map((failure) => `catalog/${failure.path}: ${failure.message}`);
    expect(failures, "catalog components that would be skipped at start-up").toEqual([]);
  });

  it("is what the catalog's components say today", async () => {
    const expected = renderRegistryDocs(await loadCatalog());
    const committed = await readFile(resolve(REPOSITORY_ROOT, "docs", "registry.md"), "utf8").catch(() => "(missing)");
    if (committed !== expected) {
      expect.fail(`docs/registry.md is stale: the catalog's components changed since it was written. Run \`${REGISTRY_DOCS_COMMAND}\` and commit the result.`);
    }
  });

  it("shows each component's key, version, description and a props table (name, type, label, optional, default, description)", async () => {
    const text = renderRegistryDocs(await loadCatalog(FIXTURE_CATALOG));
    expect(text).toContain("| [`fixture_demo-add-numbers`](#fixture_demo-add-numbers) | action | 0.2.0 | Add numbers |");
    expect(text).toContain("### fixture_demo-new-pings\n\n**New pings** (source, version 0.1.0) — `catalog/fixture_demo/sources/new-pings/new-pings.mjs`\n\nEmits every ping sent to its endpoint, with a greeting.");
    expect(text).toContain("| Prop | Type | Label | Optional | Default | Description |");
    expect(text).toContain("| `greeting` | `string` | Greeting | yes | `\"hello\"` | Put beside every ping. |");
    expect(text).toContain("| `a` | `integer` | A | no |  | The first number. |");
    expect(text).toContain("| `b` | `integer` | B | yes | `1` | The second number. |");
    // Left-out components are not documented.
    expect(text).not.toContain("misnamed");
    // The same catalog renders the same text.
    expect(renderRegistryDocs(await loadCatalog(FIXTURE_CATALOG))).toBe(text);
  });
});
