import { createHash } from "node:crypto";
import type { ComponentManifest } from "../domain/component-manifest.js";

/**
 * A component whose app prop is written inline (`gh: { type: "app", app:
 * "acme_crm" }`) without the app file bundled in has no app methods to call.
 * When the owner published that app to the registry (issue 17), the app's
 * bundle is linked into the component's: both in one module, and at load the
 * app's `propDefinitions` and `methods` fill the prop, so that
 * `this.gh.greet()` runs the published app's code. The published version is
 * the one at save time: the saved component keeps it until it is saved again.
 */

/** An app prop of a component that carries neither methods nor propDefinitions. */
export interface UnboundAppProp {
  prop: string;
  slug: string;
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.keys(value).length === 0;
}

export function unboundAppProps(manifest: ComponentManifest): UnboundAppProp[] {
  return Object.entries(manifest.props ?? {})
    .filter(([, prop]) => prop.type === "app" && typeof prop.app === "string" && isEmpty(prop.methods) && isEmpty(prop.propDefinitions))
    .map(([prop, declared]) => ({ prop, slug: declared.app as string }));
}

const HEAD = "var __runnelLinkedParts = [\n";

/** A bundle this module made (a saved component linked to published apps). */
export function isLinkedBundle(code: string): boolean {
  return code.startsWith(HEAD);
}

export interface BundlePart {
  code: string;
  map: string | null;
}

export interface LinkedBundle {
  code: string;
  hash: string;
  /** An index source map (one section per part), or null when no part has a map. */
  map: string | null;
}

/**
 * The linked module: each part wrapped in a function that gives it a
 * `module` of its own (as workflow bundles do), the component first; then
 * each listed prop takes the app's methods and propDefinitions. The fields
 * written on the prop itself (label, description, optional) stay.
 */
export function linkAppBundles(component: BundlePart, apps: Array<{ prop: string; bundle: BundlePart }>): LinkedBundle {
  const head = HEAD;
  const before = "function () {\n  var module = { exports: {} };\n  (function (module, exports, require) {\n";
  const after = "\n  }).call(module.exports, module, module.exports, require);\n  return module.exports;\n}";
  const parts = [component, ...apps.map((app) => app.bundle)];
  let code = head;
  let line = 1 + lineBreaks(head);
  const sections: Array<{ offset: { line: number; column: number }; map: unknown }> = [];
  parts.forEach((part, index) => {
    const piece = `${index > 0 ? ",\n" : ""}${before}`;
    line += lineBreaks(piece);
    // Each part starts at the beginning of its line, so columns need no shift.
    if (part.map !== null) sections.push({ offset: { line: line - 1, column: 0 }, map: JSON.parse(part.map) });
    code += `${piece}${part.code}${after}`;
    line += lineBreaks(part.code) + lineBreaks(after);
  });
  const props = JSON.stringify(apps.map((app) => app.prop));
  code += `\n];\nmodule.exports = (${LINK_AT_LOAD})(__runnelLinkedParts, ${props});\n`;
  return {
    code,
    hash: createHash("sha256").update(code).digest("hex"),
    map: sections.length > 0 ? JSON.stringify({ version: 3, sections }) : null,
  };
}

/**
 * Runs in the runner, as part of the linked module: plain JavaScript kept as
 * text (a compiled function's text may name helpers of the compiler). It
 * unwraps `default` as the runner does (an ES module compiled to CommonJS).
 */
const LINK_AT_LOAD = `function (parts, props) {
  function unwrap(exported) {
    if (typeof exported !== "object" || exported === null) return null;
    var looksLikeDefinition = "run" in exported || "props" in exported || "name" in exported || "key" in exported || "type" in exported;
    return !looksLikeDefinition && typeof exported.default === "object" && exported.default !== null ? exported.default : exported;
  }
  var exported = parts[0]();
  var definition = unwrap(exported);
  var declared = definition && typeof definition.props === "object" && definition.props !== null ? definition.props : null;
  props.forEach(function (prop, index) {
    var app = unwrap(parts[index + 1]());
    var own = declared ? declared[prop] : undefined;
    if (!declared || !app || typeof own !== "object" || own === null) return;
    declared[prop] = Object.assign({}, own, { methods: app.methods || {}, propDefinitions: app.propDefinitions || {} });
  });
  return exported;
}`;

function lineBreaks(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count += 1;
  return count;
}
