import { existsSync, readdirSync } from "node:fs";
import { relative, sep } from "node:path";
import { CATALOG_ROOT } from "./bundle-catalog.js";

/** `<app>/sources/<slug>/<slug>.mjs` or `<app>/actions/<slug>/<slug>.mjs` (a `.js` or `.ts` file is taken too). */
const COMPONENT_FILE = /^([a-z0-9_]+)\/(sources|actions)\/([a-z0-9_-]+)\/\3\.(mjs|js|ts)$/;

/** Where a catalog component's file says it belongs: its app and folder slug, whose key should be `<app>-<slug>`. */
export interface CatalogFile {
  /** Relative to the catalog folder, with "/" separators. */
  path: string;
  app: string;
  slug: string;
}

/**
 * The catalog's component files, by path. Shared code (`common/`, app
 * files) is not listed: components bring it along by importing it.
 */
export function listCatalogFiles(root: string = CATALOG_ROOT): CatalogFile[] {
  if (!existsSync(root)) return [];
  const files: CatalogFile[] = [];
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = relative(root, `${entry.parentPath ?? entry.path}${sep}${entry.name}`).split(sep).join("/");
    const match = COMPONENT_FILE.exec(path);
    if (match) files.push({ path, app: match[1]!, slug: match[3]! });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : 1));
}
