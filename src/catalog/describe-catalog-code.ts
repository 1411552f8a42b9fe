import { createRequire } from "node:module";
import { dirname } from "node:path";
import type { ComponentManifest } from "../domain/component-manifest.js";
import { toComponent } from "../sandbox/runner/component.js";
import { describeComponent } from "../sandbox/runner/manifest.js";

/**
 * The manifest of a catalog component, as a sandbox runner's inspect call
 * would describe it (the same functions), computed in this process. Only for
 * the catalog: it is Runnel's own code from its repository, and describing it
 * here costs milliseconds where starting a runner would cost a second at
 * every first start. User code is never loaded this way.
 */
export function describeCatalogCode(code: string, file: string): ComponentManifest {
  const module = { exports: {} as unknown };
  const identity = <T>(definition: T): T => definition;
  // The catalog's bundles are CommonJS with their packages inside: require only meets Node's own modules.
  const load = new Function("module", "exports", "require", "__filename", "__dirname", "defineComponent", "defineSource", "defineAction", "defineApp", code);
  load(module, module.exports, createRequire(file), file, dirname(file), identity, identity, identity, identity);
  return describeComponent(toComponent(module.exports));
}
