import { ValidationError } from "../../domain/errors.js";
import { rootKey, type PackageImport } from "./specifier.js";

/** One package a component imports itself, with the version it asks for. */
export interface RootRequest {
  name: string;
  range: string | null;
  /** Its key in the lock's `roots`: `name@range`, or `name` for the latest. */
  key: string;
  /** An import as written that asked for it, for messages. */
  specifier: string;
}

/**
 * One request per package: a component bundles one version of each package
 * it imports. Imports without a version follow the one that has a pin
 * (`lodash@^4` and `lodash/get` are the same lodash); two different pins of
 * one package are a mistake, refused with both named.
 */
export function rootRequests(imports: readonly PackageImport[], field: string): RootRequest[] {
  const byName = new Map<string, RootRequest>();
  for (const entry of imports) {
    const known = byName.get(entry.name);
    if (!known || (known.range === null && entry.range !== null)) {
      byName.set(entry.name, { name: entry.name, range: entry.range, key: rootKey(entry), specifier: entry.specifier });
    } else if (entry.range !== null && entry.range !== known.range) {
      throw new ValidationError(
        field,
        `"${entry.name}" is imported with two different versions: "${known.specifier}" and "${entry.specifier}". A component bundles one version of each package; pin it the same way in every import, or pin it once and import it elsewhere without a version.`,
        { package: entry.name, imports: [known.specifier, entry.specifier] },
      );
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
