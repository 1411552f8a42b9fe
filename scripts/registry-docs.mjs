// Writes docs/registry.md from the catalog's components themselves (their keys, versions, descriptions and
// props). Builds first (a no-op when up to date), since the catalog is read as the server reads it.
// A test (test/registry/catalog-docs.test.ts) fails when the committed file differs from what this writes.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const build = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: "inherit" });
if (build.status !== 0) process.exit(build.status ?? 1);

const { loadCatalog } = await import("../dist/catalog/load-catalog.js");
const { renderRegistryDocs } = await import("../dist/catalog/registry-docs.js");
const catalog = await loadCatalog();
if (catalog.failures.length > 0) {
  for (const failure of catalog.failures) console.error(`catalog/${failure.path}${failure.key ? ` (${failure.key})` : ""}: ${failure.message}`);
  console.error("docs/registry.md was not written: fix the catalog components above first.");
  process.exit(1);
}
writeFileSync(join(root, "docs", "registry.md"), renderRegistryDocs(catalog));
console.log(`docs/registry.md: ${catalog.components.length} component(s).`);
