import semver from "semver";
import type { ComponentManifest } from "./component-manifest.js";
import { ValidationError } from "./errors.js";
import { slugify } from "./slug.js";

/**
 * The user's component registry (SEED "Component", "Versioning"; API-COMPAT
 * "The registry"): published actions and sources, by key and semantic
 * version, in the publishing user's namespace. A version, once published,
 * never changes.
 */
export interface RegistryEntry {
  ownerId: string;
  key: string;
  version: string;
  /** The saved component (`sc_…`) this version is. */
  componentId: string;
  kind: "source" | "action";
  publishedAt: number;
}

/**
 * `<app_name_slug>-<slugified-component-name>` is one of these; any lower-case
 * slug is accepted. App slugs hold underscores (`google_sheets`,
 * `helper_functions`), so a word may too, inside it: `helper_functions-random-integer`.
 */
const KEY_WORD = "[a-z0-9]+(?:_[a-z0-9]+)*";
const REGISTRY_KEY = new RegExp(`^${KEY_WORD}(?:-${KEY_WORD})*$`);
export const MAX_REGISTRY_KEY_LENGTH = 100;
export const MAX_REGISTRY_VERSION_LENGTH = 100;

/**
 * A registry key: lower-case letters and digits in words joined by single
 * "-"; a single "_" may join the parts of a word (no spaces, capitals or
 * other punctuation). `name` is the
 * component's name, to suggest a key when there is none.
 */
export function checkRegistryKey(key: string | null | undefined, name?: string): string {
  if (key === null || key === undefined || key === "") {
    const hint = name ? ` such as "${slugify(name)}"` : "";
    throw new ValidationError("key", `A published component needs a key: add key${hint} (lower-case words joined by "-", by convention "<app>-<component-name>") to the component.`);
  }
  if (key.length > MAX_REGISTRY_KEY_LENGTH || !REGISTRY_KEY.test(key)) {
    throw new ValidationError(
      "key",
      `A published component's key must be lower-case letters and digits in words joined by single "-" (a single "_" may join the parts of a word, as in app slugs), at most ${MAX_REGISTRY_KEY_LENGTH} characters, such as "github-new-issue" or "helper_functions-random-integer"; got ${JSON.stringify(key)}.`,
    );
  }
  return key;
}

/**
 * A semantic version as written in canonical form (`1.2.3`, `1.0.0-beta.1`):
 * no `v` prefix, no spaces, no build metadata (`+…` does not order versions,
 * so two versions differing only by it could not be told apart).
 */
export function checkRegistryVersion(version: string | null | undefined): string {
  if (typeof version !== "string" || version.length > MAX_REGISTRY_VERSION_LENGTH || semver.valid(version) !== version) {
    throw new ValidationError(
      "version",
      `A published component's version must be a semantic version such as "1.0.0" or "1.1.0-beta.1" (no "v", no build metadata); got ${JSON.stringify(version) ?? String(version)}.`,
    );
  }
  return version;
}

/** Newest first by semantic version precedence (never by text: 1.10.0 is newer than 1.9.0). */
export function compareVersionsNewestFirst(a: string, b: string): number {
  return semver.rcompare(a, b);
}

/**
 * The version a key without a version resolves to: the highest release;
 * pre-releases (`2.0.0-beta.1`) only when the key has no release at all, as
 * npm's range `*` would choose.
 */
export function newestEntry<T extends Pick<RegistryEntry, "version">>(entries: readonly T[]): T | null {
  const sorted = [...entries].sort((a, b) => compareVersionsNewestFirst(a.version, b.version));
  return sorted.find((entry) => semver.prerelease(entry.version) === null) ?? sorted[0] ?? null;
}

/** Listing order: keys alphabetically, each key's versions newest first. */
export function sortEntries<T extends Pick<RegistryEntry, "key" | "version">>(entries: readonly T[]): T[] {
  return [...entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : compareVersionsNewestFirst(a.version, b.version)));
}

export interface RegistrySearch {
  /** Words to look for, in any order ("new row in google sheets"). */
  query: string;
  /** Only components of this app: keys that start with `<app>-`. */
  app?: string | undefined;
  /** The share of the query's words a key must hold, 0 to 1. Default: any one word. */
  threshold?: number | undefined;
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word.length > 0);
}

/**
 * The hosted API's registry search (`GET /v1/components/search`), over the
 * caller's registry: each key scores the share of the query's words it holds
 * (by word, not by meaning: there is no embedding model here), best first,
 * one entry per key.
 */
export function searchRegistry(entries: readonly RegistryEntry[], search: RegistrySearch): { sources: string[]; actions: string[] } {
  const wanted = [...new Set(words(search.query))];
  const scored = new Map<string, { kind: RegistryEntry["kind"]; score: number }>();
  for (const entry of entries) {
    if (scored.has(entry.key)) continue;
    if (search.app && !entry.key.startsWith(`${search.app.toLowerCase()}-`)) continue;
    const held = new Set(words(entry.key));
    const score = wanted.length === 0 ? 1 : wanted.filter((word) => held.has(word)).length / wanted.length;
    if (score > 0 && score >= (search.threshold ?? 0)) scored.set(entry.key, { kind: entry.kind, score });
  }
  const ranked = [...scored.entries()].sort(([a, x], [b, y]) => y.score - x.score || a.localeCompare(b));
  return { sources: ranked.filter(([, hit]) => hit.kind === "source").map(([key]) => key), actions: ranked.filter(([, hit]) => hit.kind === "action").map(([key]) => key) };
}

/**
 * A version of a component of Runnel's own catalog (catalog/ in the
 * repository), published at start-up into every installation. It belongs to
 * no user: every user sees it beside their own entries, and deploying it
 * copies it among the user's components (runners are per user).
 */
export interface CatalogEntry {
  key: string;
  version: string;
  kind: "source" | "action";
  name: string;
  description: string | null;
  /** Its file under catalog/, such as `http/sources/new-requests/new-requests.mjs`. */
  path: string;
  codeHash: string;
  manifest: ComponentManifest;
  publishedAt: number;
}

/** A catalog version with its code and the bundle a runner loads. */
export interface CatalogComponent extends CatalogEntry {
  code: string;
  bundle: string;
  bundleHash: string;
  bundleMap: string | null;
}

/** What a registry key is: a component (deployed by key), or an app file (used by components through an app prop). */
export type RegistryKind = "source" | "action" | "app";

/** Whose a registry entry is: Runnel's catalog (every user's), or the caller's own. */
export type RegistryNamespace = "catalog" | "user";

export interface RegistryFilter {
  /** Words that must all appear in the key, name or description (any case, parts of words too). */
  q?: string | undefined;
  /** Only this app's components: keys that start with `<app>-`. */
  app?: string | undefined;
  type?: RegistryKind | undefined;
  namespace?: RegistryNamespace | undefined;
}

/** What a listing filters on. */
export interface RegistryListingFields {
  key: string;
  name: string;
  description: string | null;
  kind: RegistryKind;
  namespace: RegistryNamespace;
}

export function matchesRegistryFilter(item: RegistryListingFields, filter: RegistryFilter): boolean {
  if (filter.type && item.kind !== filter.type) return false;
  if (filter.namespace && item.namespace !== filter.namespace) return false;
  // An app's key is its slug: `app=github` lists the app itself beside its components.
  if (filter.app && !(item.kind === "app" ? item.key === filter.app.toLowerCase() : item.key.startsWith(`${filter.app.toLowerCase()}-`))) return false;
  const haystack = `${item.key} ${item.name} ${item.description ?? ""}`.toLowerCase();
  return words(filter.q ?? "").every((word) => haystack.includes(word));
}

/**
 * One page of a list sorted by key: `after` gives the keys after it, `before`
 * the `limit` keys just before it. Cursors are keys, compared rather than
 * looked up, so a cursor whose key went away still pages on.
 */
export function pageByKey<T extends { key: string }>(sorted: readonly T[], request: { limit: number; after?: string | undefined; before?: string | undefined }): T[] {
  if (request.after !== undefined) return sorted.filter((item) => item.key > request.after!).slice(0, request.limit);
  if (request.before !== undefined) {
    const earlier = sorted.filter((item) => item.key < request.before!);
    return earlier.slice(Math.max(0, earlier.length - request.limit));
  }
  return sorted.slice(0, request.limit);
}
