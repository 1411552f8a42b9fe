import { createHash } from "node:crypto";
import type { SavedComponent } from "../../domain/sources.js";
import type { ComponentBundle } from "../../sandbox/sandbox.js";
import type { BundleFiles } from "../bundle-files.js";

/**
 * Every step of a workflow in one module, so that one warm runner serves the
 * whole workflow (a runner per step would make a 3-step workflow hold three
 * processes and thrash the pool). Each step's own CommonJS bundle is wrapped in
 * a function that gives it a `module` of its own; the runner calls it on the
 * step's first use (runner/runner.ts, `__runnelWorkflowSteps`).
 */
export function workflowBundleCode(stepBundles: string[]): string {
  const factories = stepBundles.map(
    // `require` is a parameter, as in Node's own module wrapper: a bundle's `var require = guard(require)` must see the real one.
    (code) => `function () {\n  var module = { exports: {} };\n  (function (module, exports, require) {\n${code}\n  }).call(module.exports, module, module.exports, require);\n  return module.exports;\n}`,
  );
  return `module.exports = { __runnelWorkflowSteps: [\n${factories.join(",\n")}\n] };\n`;
}

/** The bundle of a workflow's sandboxed steps, written to its own folder on first use. */
export async function workflowBundle(files: BundleFiles, ownerId: string, components: SavedComponent[]): Promise<ComponentBundle> {
  const id = createHash("sha256")
    .update(components.map((component) => component.bundleHash).join(" "))
    .digest("hex");
  const file = await files.fileFor(`wf-${id}`, () => workflowBundleCode(components.map((component) => component.bundle)));
  return { id: `wf-${id}`, ownerId, file };
}
