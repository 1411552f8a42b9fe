import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { ApiError, type ApiClient, type ComponentInput, type ComponentView } from "../client/api-client.js";

/** What `deploy <file|url|key>` and `update --code` were given. */
export type ComponentTarget = { kind: "file"; path: string } | { kind: "url"; url: string } | { kind: "key"; key: string };

const CODE_FILE = /\.(c|m)?(j|t)s$/;

/** A file on disk wins; then an http(s) URL; anything else that does not look like a path is a saved component's key. */
export async function classifyTarget(argument: string): Promise<ComponentTarget> {
  if (await isFile(argument)) return { kind: "file", path: resolve(argument) };
  if (/^https?:\/\//i.test(argument)) return { kind: "url", url: argument };
  if (argument.includes("/") || argument.includes("\\") || CODE_FILE.test(argument)) {
    throw new Error(`No such file: ${argument}. Give the path to a component file, an http(s) URL of its code, or a component key.`);
  }
  return { kind: "key", key: argument };
}

/**
 * A component file with everything it imports by relative path (its app file,
 * `../common/*.mjs`) in one piece, since the server only ever sees this code.
 * Syntax errors come back as an error naming the file, line and column.
 */
export async function bundleFile(path: string): Promise<{ input: Required<Pick<ComponentInput, "component_code" | "filename">>; hash: string }> {
  // Loaded here: esbuild is only needed by the commands that read files.
  const { bundleComponent } = await import("../components/bundle.js");
  const bundle = await bundleComponent({ kind: "file", path });
  // The map goes inline: the server's bundler chains it, so stack traces name these files and lines, not the bundle's.
  const code = `${bundle.code}//# sourceMappingURL=data:application/json;base64,${Buffer.from(bundle.map).toString("base64")}\n`;
  // Of the code sent, map included: a change that moves lines (a blank line) changes the map alone, and is a change.
  return { input: { component_code: code, filename: basename(path) }, hash: createHash("sha256").update(code).digest("hex") };
}

/** Saves the target's code as a component (or finds the saved one by key), to learn its props. */
export async function saveTarget(client: ApiClient, target: ComponentTarget): Promise<ComponentView> {
  switch (target.kind) {
    case "file":
      return client.saveComponent((await bundleFile(target.path)).input);
    case "url":
      return client.saveComponent({ component_url: target.url });
    case "key":
      // The newest published version first (the registry), as POST /v1/sources does with a key.
      try {
        const published = await client.getPublished(target.key);
        if (published.component) return published.component;
        throw new Error(`"${target.key}" is an app, not a component: an app is not deployed. Components use it through an app prop ({ type: "app", app: "${target.key}" }); deploy such a component instead.`);
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 404)) throw error;
      }
      try {
        return await client.getComponent(target.key);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) {
          throw new Error(
            `"${target.key}" is not a file here, nor a key of the registry (Runnel's catalog and what you published) or of a component you saved. Find keys with \`runnel list registry <words>\`, or give a path to a component file or an http(s) URL of its code.`,
          );
        }
        throw error;
      }
  }
}

export async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
