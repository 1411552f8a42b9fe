// The catalog step of `npm run build`: every component under catalog/ bundled (its relative imports and
// packages inside), described and checked, into dist/catalog/manifest.json, which the server publishes at
// start-up without bundling anything. Run after tsc (it uses dist/catalog/). Skips itself when the
// catalog, the installed packages and the builder are as at the last build (one hash over them).
import { relative } from "node:path";
import { BUILT_CATALOG_FILE, writeBuiltCatalog } from "../dist/catalog/load-catalog.js";

const { catalog, written } = await writeBuiltCatalog();
for (const failure of catalog.failures) {
  console.warn(`Catalog: catalog/${failure.path}${failure.key ? ` (${failure.key})` : ""} is left out: ${failure.message}`);
}
if (written) console.log(`Catalog: ${catalog.components.length} component(s) built into ${relative(process.cwd(), BUILT_CATALOG_FILE)}.`);
