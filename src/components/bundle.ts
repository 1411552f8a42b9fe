import { build, type Message, type Plugin } from "esbuild";
import { createHash } from "node:crypto";
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ValidationError } from "../domain/errors.js";
import { DYNAMIC_REQUIRE_GUARD_LINES, withDynamicRequireGuard } from "./dynamic-require.js";
import { isBuiltinImport, parseImport, SpecifierError } from "./packages/specifier.js";

/** A component compiled to one CommonJS file that a sandbox runner can `require`. */
export interface ComponentBundle {
  /** CommonJS source: `module.exports` is the component, or `{ default: component }` for ES modules. */
  code: string;
  /** sha256 of `code`: the same code always bundles to the same hash. */
  hash: string;
  /** Names of the packages the component imports (`lodash` for `lodash@^4/get`), sorted. */
  packages: string[];
  /** Its package imports as written (`lodash@^4/get`), sorted; Node's own modules are not listed. */
  imports: string[];
  /**
   * Source map (v3 JSON, no sources' content) of `code`: stack frames in the
   * bundle are mapped back to the component's own file, line and column
   * (sandbox/stack-mapping.ts). Its sources are relative (`component.ts`,
   * `node_modules/lodash/get.js`): no path of the server is in it.
   */
  map: string;
}

export interface BundleOptions {
  /**
   * Resolves package imports into the bundle (the server's bundles, see
   * ComponentBundler). Without it packages stay external and are listed, as
   * the CLI wants before it sends code to the server.
   */
  packages?: { plugin: Plugin; cacheRoot: string } | undefined;
  /** Puts the guard that explains failing `require(name)` calls at the top (bundles a runner loads). */
  guardDynamicRequire?: boolean | undefined;
}

export type ComponentSource =
  | { kind: "code"; code: string; filename?: string | undefined }
  | { kind: "file"; path: string };

/** Which input field a problem belongs to, for the 400 that names it. */
const FIELD = { code: "component_code", file: "component_file" } as const;

/**
 * Compiles a component written as CommonJS, an ES module or TypeScript into
 * one CommonJS file. Relative imports (`../common/base.mjs`, the app file) are
 * bundled in; packages stay external and are listed, unless `options.packages`
 * resolves them (the server's ComponentBundler does). Nothing is executed.
 */
export async function bundleComponent(source: ComponentSource, options: BundleOptions = {}): Promise<ComponentBundle> {
  const imports = new Set<string>();
  const filename = source.kind === "file" ? source.path : (source.filename ?? "component.ts");
  // esbuild writes nothing (write: false), but an external map needs an output path: its sources are relative to its folder.
  const workingDir = options.packages?.cacheRoot ?? process.cwd();
  const outfile = join(workingDir, "component.cjs");
  let result;
  try {
    result = await build({
      ...(source.kind === "file"
        ? { entryPoints: [source.path] }
        : { stdin: { contents: source.code, loader: loaderFor(filename), sourcefile: basename(filename), resolveDir: resolve(dirname(filename)) } }),
      bundle: true,
      write: false,
      platform: "node",
      format: "cjs",
      target: "node20",
      logLevel: "silent",
      outfile,
      // "external": the map is an output file of its own, and the code has no comment that points at it.
      sourcemap: "external",
      sourcesContent: false,
      charset: "utf8",
      // `.mjs` app files are ES modules; TypeScript's own files may import them by that name.
      resolveExtensions: [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".json"],
      // `import(x)` becomes a require, so that bundled packages load through it and a computed name meets the guard.
      supported: { "dynamic-import": false },
      // Paths in the bundle's comments are relative to this: the cache, so the same packages bundle the same everywhere.
      ...(options.packages ? { absWorkingDir: options.packages.cacheRoot } : {}),
      plugins: [
        ...(source.kind === "code" ? [inlineCodeHasNoFiles(resolve(filename))] : []),
        options.packages?.plugin ?? {
          name: "packages-are-external",
          setup(plugin) {
            plugin.onResolve({ filter: /^[^./#]/ }, (args) => {
              if (!isBuiltinImport(args.path)) imports.add(args.path);
              return { path: args.path, external: true };
            });
          },
        },
      ],
    });
  } catch (error) {
    throw toValidationError(error, FIELD[source.kind]);
  }
  const output = result.outputFiles.find((file) => !file.path.endsWith(".map"))?.text ?? "";
  const rawMap = result.outputFiles.find((file) => file.path.endsWith(".map"))?.text;
  const code = options.guardDynamicRequire ? withDynamicRequireGuard(output) : output;
  const entryDir = source.kind === "file" ? dirname(resolve(source.path)) : resolve(dirname(filename));
  const map = relativeMap(rawMap, dirname(outfile), entryDir, options.guardDynamicRequire ? DYNAMIC_REQUIRE_GUARD_LINES : 0);
  const sorted = [...imports].sort();
  return { code, hash: createHash("sha256").update(code).digest("hex"), packages: [...new Set(sorted.map(packageName))].sort(), imports: sorted, map };
}

/**
 * The map with sources that name no folder of the server (nor of the
 * CLI user's machine): a package's file from its `node_modules/`, the
 * component's own files relative to its entry's folder. `shiftLines` are
 * lines put before the code esbuild wrote (the dynamic-require guard).
 */
function relativeMap(raw: string | undefined, outDir: string, entryDir: string, shiftLines: number): string {
  const parsed = raw ? (JSON.parse(raw) as { version: number; sources?: string[]; mappings?: string; names?: string[] }) : { version: 3 };
  const sources = (parsed.sources ?? []).map((name) => relativeSource(isAbsolute(name) ? name : resolve(outDir, name), entryDir));
  // Each ";" in `mappings` is one line of the generated code.
  const mappings = ";".repeat(shiftLines) + (parsed.mappings ?? "");
  return JSON.stringify({ version: 3, sources, names: parsed.names ?? [], mappings });
}

function relativeSource(path: string, entryDir: string): string {
  const parts = path.split(sep);
  const modules = parts.lastIndexOf("node_modules");
  if (modules >= 0) return parts.slice(modules).join("/");
  const inside = relative(entryDir, path);
  // A file outside the entry's folder (`../common/base.mjs`) keeps its relative path; `..` names no folder of anyone's.
  return (isAbsolute(inside) ? basename(path) : inside).split(sep).join("/");
}

/**
 * Inline code has no folder: a relative or absolute import from it would read
 * files of the server itself (a config file, another user's bundle). Only
 * code deployed from a file (the CLI bundles it first) brings files along.
 */
const inlineCodeHasNoFiles = (inlinePath: string): Plugin => ({
  name: "inline-code",
  setup(plugin) {
    plugin.onResolve({ filter: /^[./]/ }, (args) => {
      // esbuild names the inline code's importer resolveDir + sourcefile; imports inside packages come from elsewhere.
      if (args.importer !== inlinePath) return undefined;
      return {
        errors: [
          {
            text: `component_code cannot import "${args.path}": code sent inline has no files beside it. Put what it imports in the code, or deploy the file with \`runnel deploy <file>\`, which bundles its relative imports.`,
          },
        ],
      };
    });
  },
});

function loaderFor(filename: string): "ts" | "js" {
  // TypeScript is a superset of JavaScript: reading plain JS as TS accepts it too,
  // and inline code has no file name to tell which one it is.
  return [".js", ".mjs", ".cjs"].includes(extname(filename)) ? "js" : "ts";
}

/** `lodash@^4/get` → `lodash`; an import that names no package is listed as written (the resolver refuses it with a reason). */
function packageName(specifier: string): string {
  try {
    return parseImport(specifier).name;
  } catch (error) {
    if (error instanceof SpecifierError) return specifier;
    throw error;
  }
}

function toValidationError(error: unknown, field: string): ValidationError {
  const messages: Message[] = (error as { errors?: Message[] }).errors ?? [];
  const first = messages[0];
  if (!first) return new ValidationError(field, `The component could not be compiled: ${(error as Error).message}`);
  // The package plugin's messages are sentences of their own, not syntax errors.
  if (first.pluginName === "locked-packages" || first.pluginName === "inline-code") return new ValidationError(field, first.text);
  const where = first.location ? ` at line ${first.location.line}, column ${first.location.column + 1}` : "";
  const file = first.location?.file ? ` of ${first.location.file}` : "";
  const line = first.location?.lineText ? `\n  ${first.location.lineText.trim()}` : "";
  return new ValidationError(field, `Syntax error${where}${file}: ${first.text}.${line}`, {
    line: first.location?.line,
    column: first.location ? first.location.column + 1 : undefined,
  });
}
