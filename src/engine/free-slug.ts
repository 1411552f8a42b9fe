import { ConflictError } from "../domain/errors.js";

/** Tries before a slug conflict is the caller's. */
const SLUG_ATTEMPTS = 5;

/**
 * Stores something new named by a slug derived from its name. When a create
 * of the same name running at the same time took the slug first (the store
 * answers ConflictError), it is stored under the next free one instead: the
 * conflict is not the user's mistake.
 */
export async function storeUnderFreeSlug<T extends { nameSlug: string }, R>(item: T, store: (item: T) => Promise<R>, freeSlug: () => Promise<string>): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store(item);
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= SLUG_ATTEMPTS) throw error;
      item = { ...item, nameSlug: await freeSlug() };
    }
  }
}
