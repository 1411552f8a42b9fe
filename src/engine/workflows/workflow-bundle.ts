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
  return workflowBundleLayout(stepBundles).code;
}

/**
 * The combined file and the (1-based) line each step's code starts at: a
 * frame in the file is mapped with the map of the step it falls in. Each
 * step's code starts at the beginning of its line, so columns need no shift.
 */
export function workflowBundleLayout(stepBundles: string[]): { code: string; startLines: number[] } {
  const head = "module.exports = { __runnelWorkflowSteps: [\n";
  // `require` is a parameter, as in Node's own module wrapper: a bundle's `var require = guard(require)` must see the real one.
  const before = "function () {\n  var module = { exports: {} };\n  (function (module, exports, require) {\n";
  const after = "\n  }).call(module.exports, module, module.exports, require);\n  return module.exports;\n}";
  let code = head;
  let line = 1 + lineBreaks(head);
  const startLines: number[] = [];
  stepBundles.forEach((bundle, index) => {
    const piece = `${index > 0 ? ",\n" : ""}${before}`;
    line += lineBreaks(piece);
    startLines.push(line);
    code += `${piece}${bundle}${after}`;
    line += lineBreaks(bundle) + lineBreaks(after);
  });
  return { code: `${code}\n] };\n`, startLines };
}

function lineBreaks(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count += 1;
  return count;
}

/** The bundle of a workflow's sandboxed steps, written to its own folder on first use. */
export async function workflowBundle(files: BundleFiles, ownerId: string, components: SavedComponent[]): Promise<ComponentBundle> {
  const id = createHash("sha256")
    .update(components.map((component) => component.bundleHash).join(" "))
    .digest("hex");
  const layout = workflowBundleLayout(components.map((component) => component.bundle));
  const file = await files.fileFor(`wf-${id}`, () => layout.code);
  const parts = components.map((component, index) => ({ fromLine: layout.startLines[index]!, map: component.bundleMap }));
  return { id: `wf-${id}`, ownerId, file, sourceMaps: { parts } };
}
