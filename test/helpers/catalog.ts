import { bundleCatalogComponent } from "../../src/catalog/bundle-catalog.js";

/**
 * The code a catalog component is published with (relative imports and
 * packages bundled in), for deploying it in a test exactly as the registry
 * will: `catalogCode("http/sources/new-requests/new-requests.mjs")`.
 */
export async function catalogCode(pathInCatalog: string): Promise<string> {
  return (await bundleCatalogComponent(pathInCatalog)).code;
}
