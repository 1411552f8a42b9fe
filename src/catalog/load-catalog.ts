import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, extname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CATALOG_ROOT, REPOSITORY_ROOT } from "./bundle-catalog.js";
import { buildCatalog, type BuiltCatalog } from "./build-catalog.js";

const HERE = dirname(fileURLToPath(import.meta.url));
/** `.ts` when running from src/ (the tests), `.js` from dist/. */
const EXT = extname(fileURLToPath(import.meta.url));

/** Bumped when what a build writes changes shape, so that older files are not read as new ones. */
const FORMAT = "runnel-catalog-1";

/**
 * The built catalog that `npm run build` writes next to this module in dist/
 * (scripts/build-catalog.mjs). From src/ there is none: the catalog is built
 * on the fly and kept under node_modules/.cache, by fingerprint.
 */
export const BUILT_CATALOG_FILE = join(HERE, "manifest.json");
const SOURCE_CACHE_DIR = join(REPOSITORY_ROOT, "node_modules", ".cache", "runnel");

/** The code that turns catalog files into a built catalog: a change to it is a change of the build. */
const BUILDER_FILES = [
  ...["bundle-catalog", "build-catalog", "catalog-files", "describe-catalog-code", "load-catalog"].map((name) => join(HERE, name + EXT)),
  ...["components/bundle", "components/dynamic-require", "sandbox/runner/component", "sandbox/runner/manifest", "sandbox/runner/prop-definition", "domain/component-rules"].map((name) =>
    join(HERE, "..", name + EXT),
  ),
];

/**
 * One hash over everything a built catalog depends on: the catalog's files,
 * the installed packages (package-lock.json) it bundles, and the builder's
 * own code. Cheap (it reads files, bundles nothing).
 */
export function catalogFingerprint(root: string = CATALOG_ROOT): string {
  const hash = createHash("sha256").update(FORMAT);
  const files = existsSync(root)
    ? readdirSync(root, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    : [];
  for (const file of [...files.sort(), join(REPOSITORY_ROOT, "package-lock.json"), ...BUILDER_FILES]) {
    hash.update(relative(REPOSITORY_ROOT, file)).update("\0");
    hash.update(existsSync(file) ? readFileSync(file) : "(missing)").update("\0");
  }
  return hash.digest("hex");
}

const loaded = new Map<string, Promise<BuiltCatalog>>();

/**
 * The catalog to publish at start-up. From dist/: the file the build wrote,
 * when it is of today's inputs (or the catalog folder is not shipped beside
 * it). Otherwise (from src/, or a stale build) it is built on the fly and
 * kept by fingerprint, so that only the first start after a change bundles.
 */
export function loadCatalog(root: string = CATALOG_ROOT): Promise<BuiltCatalog> {
  const fingerprint = catalogFingerprint(root);
  let catalog = loaded.get(fingerprint);
  if (!catalog) {
    catalog = readOrBuild(fingerprint, root);
    // A failed build is not kept: the next start tries again.
    catalog.catch(() => loaded.delete(fingerprint));
    loaded.set(fingerprint, catalog);
  }
  return catalog;
}

async function readOrBuild(fingerprint: string, root: string): Promise<BuiltCatalog> {
  const built = readBuilt(BUILT_CATALOG_FILE);
  if (built && (built.fingerprint === fingerprint || !existsSync(root))) return built;
  // Named by the folder too: a test's own catalog folder and the real one keep a file each.
  const prefix = `catalog-${createHash("sha256").update(resolve(root)).digest("hex").slice(0, 12)}-`;
  const cacheFile = join(SOURCE_CACHE_DIR, `${prefix}${fingerprint}.json`);
  const cached = readBuilt(cacheFile);
  if (cached?.fingerprint === fingerprint) return cached;
  const fresh = await buildCatalog(fingerprint, root);
  try {
    writeAtomically(cacheFile, fresh);
    // Older builds are of inputs that are gone.
    for (const name of readdirSync(SOURCE_CACHE_DIR)) {
      if (name.startsWith(prefix) && name !== `${prefix}${fingerprint}.json` && !name.includes(".tmp-")) rmSync(join(SOURCE_CACHE_DIR, name), { force: true });
    }
  } catch {
    // A read-only tree still starts: it builds again next time.
  }
  return fresh;
}

/** Builds the catalog into `file` (the build step: dist/catalog/manifest.json), unless it holds today's already. */
export async function writeBuiltCatalog(file: string = BUILT_CATALOG_FILE, root: string = CATALOG_ROOT): Promise<{ catalog: BuiltCatalog; written: boolean }> {
  const fingerprint = catalogFingerprint(root);
  const existing = readBuilt(file);
  if (existing?.fingerprint === fingerprint) return { catalog: existing, written: false };
  const catalog = await buildCatalog(fingerprint, root);
  writeAtomically(file, catalog);
  return { catalog, written: true };
}

function readBuilt(file: string): BuiltCatalog | null {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as BuiltCatalog;
    return typeof parsed.fingerprint === "string" && Array.isArray(parsed.components) && Array.isArray(parsed.failures) ? parsed : null;
  } catch {
    return null;
  }
}

/** A temporary file renamed into place: a reader never sees half a file, and a hard-linked old one is left alone. */
function writeAtomically(file: string, catalog: BuiltCatalog): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, JSON.stringify(catalog));
  renameSync(temporary, resolve(file));
}
