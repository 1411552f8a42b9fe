import { build, type Message } from "esbuild";
import { createHash } from "node:crypto";
import { basename, dirname, extname } from "node:path";
import { ValidationError } from "../domain/errors.js";

/** A component compiled to one CommonJS file that a sandbox runner can `require`. */
export interface ComponentBundle {
  /** CommonJS source: `module.exports` is the component, or `{ default: component }` for ES modules. */
  code: string;
  /** sha256 of `code`: the same code always bundles to the same hash. */
  hash: string;
  /** Bare package names the component imports (resolved by the package resolver, not bundled here). */
  packages: string[];
}

export type ComponentSource =
  | { kind: "code"; code: string; filename?: string | undefined }
  | { kind: "file"; path: string };

/** Which input field a problem belongs to, for the 400 that names it. */
const FIELD = { code: "component_code", file: "component_file" } as const;

/**
 * Compiles a component written as CommonJS, an ES module or TypeScript into
 * one CommonJS file. Relative imports (`../common/base.mjs`, the app file) are
 * bundled in; packages stay external for the resolver. Nothing is executed.
 */
export async function bundleComponent(source: ComponentSource): Promise<ComponentBundle> {
  const packages = new Set<string>();
  const filename = source.kind === "file" ? source.path : (source.filename ?? "component.ts");
  let result;
  try {
    result = await build({
      ...(source.kind === "file"
        ? { entryPoints: [source.path] }
        : { stdin: { contents: source.code, loader: loaderFor(filename), sourcefile: basename(filename), resolveDir: dirname(filename) } }),
      bundle: true,
      write: false,
      platform: "node",
      format: "cjs",
      target: "node20",
      logLevel: "silent",
      sourcemap: false,
      charset: "utf8",
      // `.mjs` app files are ES modules; TypeScript's own files may import them by that name.
      resolveExtensions: [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".json"],
      plugins: [
        {
          name: "packages-are-external",
          setup(plugin) {
            plugin.onResolve({ filter: /^[^./]/ }, (args) => {
              if (!args.path.startsWith("node:")) packages.add(packageName(args.path));
              return { path: args.path, external: true };
            });
          },
        },
      ],
    });
  } catch (error) {
    throw toValidationError(error, FIELD[source.kind]);
  }
  const code = result.outputFiles[0]?.text ?? "";
  return { code, hash: createHash("sha256").update(code).digest("hex"), packages: [...packages].sort() };
}

function loaderFor(filename: string): "ts" | "js" {
  // TypeScript is a superset of JavaScript: reading plain JS as TS accepts it too,
  // and inline code has no file name to tell which one it is.
  return [".js", ".mjs", ".cjs"].includes(extname(filename)) ? "js" : "ts";
}

/** `lodash/get` → `lodash`, `@scope/pkg/sub` → `@scope/pkg`, `axios@1.2.3` stays whole for the resolver. */
export function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

function toValidationError(error: unknown, field: string): ValidationError {
  const messages: Message[] = (error as { errors?: Message[] }).errors ?? [];
  const first = messages[0];
  if (!first) return new ValidationError(field, `The component could not be compiled: ${(error as Error).message}`);
  const where = first.location ? ` at line ${first.location.line}, column ${first.location.column + 1}` : "";
  const file = first.location?.file ? ` of ${first.location.file}` : "";
  const line = first.location?.lineText ? `\n  ${first.location.lineText.trim()}` : "";
  return new ValidationError(field, `Syntax error${where}${file}: ${first.text}.${line}`, {
    line: first.location?.line,
    column: first.location ? first.location.column + 1 : undefined,
  });
}
