/**
 * Name slugs: a deployed source's `name` becomes a slug, unique within the
 * account (SEED "Component": auto-incremented when taken), which commands
 * accept in place of an id.
 */
export const MAX_SLUG_LENGTH = 60;
const FALLBACK_SLUG = "source";

/**
 * Lower-case letters and digits, with every run of anything else turned into
 * one "-", none at either end. Accents are dropped first ("Café" → "cafe"),
 * so names in Latin scripts keep their letters.
 */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-");
  return trimDashes(trimDashes(slug).slice(0, MAX_SLUG_LENGTH)) || FALLBACK_SLUG;
}

/**
 * `base` when free, else `base-1`, `base-2`, … The base is shortened when the
 * suffix would push the slug past the maximum length.
 */
export function uniqueSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 1; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${trimDashes(base.slice(0, MAX_SLUG_LENGTH - suffix.length))}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

function trimDashes(text: string): string {
  return text.replace(/^-+|-+$/g, "");
}
