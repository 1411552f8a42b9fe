import { isFunctionMarker, type ComponentManifest } from "./component-manifest.js";
import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";
import { isValidAppSlug } from "./apps.js";
import { validateProp } from "./prop-rules.js";
import type { ValidatedProp } from "./prop-types.js";
import { isPlainObject } from "./prop-values.js";

/**
 * The rules of an app file (`export default { type: "app", app: "<slug>",
 * propDefinitions, methods }`, API-COMPAT "How existing components are laid
 * out") when it is published to the registry on its own (issue 17). Its
 * registry key is its slug (the spec is silent; an app is named by its slug
 * everywhere else). Errors name the field: `app`, `version`,
 * `propDefinitions.<name>.<field>`, `methods.<name>`.
 */
export interface ValidatedAppFile {
  slug: string;
  /** The file's `name`, else its slug: the registry lists a name for every key. */
  name: string;
  version: string;
  description: string | null;
  /** In declaration order. */
  propDefinitions: ValidatedProp[];
  methods: string[];
}

// An app slug that is also a registry key: lower-case words, "_" inside a word, "-" between words.
const SLUG_AS_KEY = /^[a-z0-9]+(?:_[a-z0-9]+)*(?:-[a-z0-9]+(?:_[a-z0-9]+)*)*$/;

export function isAppFileManifest(manifest: ComponentManifest): boolean {
  return manifest.type === "app";
}

export function validateAppFile(manifest: ComponentManifest): ValidatedAppFile {
  const slug = checkSlug(manifest.app);
  const { version, name, description, key } = manifest;
  if (key !== undefined && key !== slug) {
    throw new ValidationError("key", `An app's registry key is its slug (${JSON.stringify(slug)}); remove key, or make it ${JSON.stringify(slug)}; got ${JSON.stringify(key) ?? describeValue(key)}.`);
  }
  if (typeof version !== "string" || version === "") {
    throw new ValidationError("version", `A published app needs a version: add version: "0.0.1" (a semantic version) to the app file, and bump it on each change; got ${describeValue(version)}.`);
  }
  if (name !== undefined && (typeof name !== "string" || name.trim() === "")) {
    throw new ValidationError("name", `An app's name must be a non-empty string (or left out: the slug stands in); got ${describeValue(name)}.`);
  }
  if (description !== undefined && typeof description !== "string") {
    throw new ValidationError("description", `description must be a string; got ${describeValue(description)}.`);
  }
  return {
    slug,
    name: typeof name === "string" ? name.trim() : slug,
    version,
    description: description ?? null,
    propDefinitions: checkPropDefinitions(manifest.propDefinitions),
    methods: checkMethods(manifest.appMethods),
  };
}

function checkSlug(app: unknown): string {
  if (typeof app !== "string" || app === "") {
    throw new ValidationError("app", `An app file needs app: its name slug, as components name it ({ type: "app", app: "my_app" }); got ${describeValue(app)}.`);
  }
  if (app.length > 64 || !isValidAppSlug(app) || !SLUG_AS_KEY.test(app)) {
    throw new ValidationError(
      "app",
      `An app's slug must be lower-case letters and digits, in words joined by "_" or single "-", at most 64 characters, such as "google_sheets"; got ${JSON.stringify(app)}.`,
    );
  }
  return app;
}

/**
 * Each definition passes the checks of a component's prop. A definition may
 * be used by sources and actions alike, so a type either allows is accepted.
 */
function checkPropDefinitions(definitions: unknown): ValidatedProp[] {
  if (definitions === undefined) return [];
  if (!isPlainObject(definitions)) {
    throw new ValidationError("propDefinitions", `propDefinitions must be an object of named prop declarations, such as { repo: { type: "string", label: "Repository" } }; got ${describeValue(definitions)}.`);
  }
  return Object.entries(definitions).map(([name, declared]) => {
    try {
      return validateProp(name, declared, "source");
    } catch (asSource) {
      try {
        return validateProp(name, declared, "action");
      } catch {
        throw asPropDefinitionError(asSource);
      }
    }
  });
}

/** validateProp names `props.<name>…`; here it is `propDefinitions.<name>…`. */
function asPropDefinitionError(error: unknown): unknown {
  if (!(error instanceof ValidationError)) return error;
  const field = error.field.startsWith("props.") ? `propDefinitions.${error.field.slice("props.".length)}` : error.field;
  return new ValidationError(field, error.message.replace(/^Prop "/, 'Prop definition "').replace("and this component is", "and this definition was checked as"));
}

function checkMethods(methods: unknown): string[] {
  if (methods === undefined) return [];
  if (!isPlainObject(methods)) {
    throw new ValidationError("methods", `An app's methods must be an object of functions, such as { async getRepo(name) { … } }; got ${describeValue(methods)}.`);
  }
  return Object.entries(methods).map(([name, value]) => {
    if (!isFunctionMarker(value)) throw new ValidationError(`methods.${name}`, `An app's methods.${name} must be a function; got ${describeValue(value)}. Move values to propDefinitions or a constant.`);
    return name;
  });
}
