import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { apiKeyPrefix, generateApiKeySecret, hashApiKeySecret } from "../../src/domain/accounts.js";
import { ConflictError } from "../../src/domain/errors.js";
import { newId } from "../../src/domain/ids.js";
import { parsePageRequest } from "../../src/domain/paging.js";
import type { NewUser, Store } from "../../src/store/store.js";

/**
 * One backend under test: `open` opens (and migrates) a store on the same
 * namespace every time it is called, so reopening shows what was durable;
 * `dispose` removes the namespace.
 */
export interface StoreBackend {
  open(): Promise<Store>;
  dispose(): Promise<void>;
}

export function newUserInput(overrides: Partial<NewUser> = {}): NewUser {
  const id = newId("user");
  return { id, username: `user-${id.slice(-10)}`, email: null, isAdmin: false, createdAt: Date.now(), ...overrides };
}

function newKeyFields(at = Date.now()) {
  const secret = generateApiKeySecret();
  return { secret, fields: { id: newId("apiKey", at), name: "test key", hash: hashApiKeySecret(secret), prefix: apiKeyPrefix(secret), createdAt: at } };
}

/** The Store contract: every adapter must pass all of it. */
export function describeStoreContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;

    beforeEach(async () => {
      backend = await makeBackend();
      store = await backend.open();
    });

    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    it("migrates idempotently and answers ping", async () => {
      await store.migrate();
      await store.migrate();
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it("rewrites freed space on demand, and still answers after", async () => {
      await store.createUser(newUserInput());
      await expect(store.purgeFreedSpace()).resolves.toBeUndefined();
      expect(await store.countUsers()).toBe(1);
    });

    it("creates and finds users by id and username", async () => {
      const input = newUserInput({ email: "ada@example.com" });
      const created = await store.createUser(input);
      expect(created).toEqual(input);
      expect(await store.findUser(input.id)).toEqual(input);
      expect(await store.findUserByUsername(input.username)).toEqual(input);
      expect(await store.findUser(newId("user"))).toBeNull();
      expect(await store.findUserByUsername("nobody-here")).toBeNull();
    });

    it("sets and clears a user's e-mail address, and only that user's", async () => {
      const input = newUserInput();
      const other = newUserInput({ email: "other@example.com" });
      await store.createUser(input);
      await store.createUser(other);
      expect(await store.updateUserEmail(input.id, "new@example.com")).toEqual({ ...input, email: "new@example.com" });
      expect((await store.findUser(input.id))?.email).toBe("new@example.com");
      expect((await store.findUser(other.id))?.email).toBe("other@example.com");
      expect((await store.updateUserEmail(input.id, null))?.email).toBeNull();
      expect(await store.updateUserEmail(newId("user"), "ghost@example.com")).toBeNull();
    });

    it("refuses a taken username with a Conflict naming it", async () => {
      const first = newUserInput();
      await store.createUser(first);
      const second = newUserInput({ username: first.username });
      await expect(store.createUser(second)).rejects.toBeInstanceOf(ConflictError);
      await expect(store.createUser(second)).rejects.toThrow(first.username);
      expect(await store.findUser(second.id)).toBeNull();
    });

    it("bootstraps exactly one admin, even when asked concurrently", async () => {
      const attempts = await Promise.all(
        [1, 2, 3].map(() => store.bootstrapAdmin({ ...newUserInput({ username: "admin", isAdmin: true }), key: newKeyFields().fields })),
      );
      const created = attempts.filter((attempt) => attempt !== null);
      expect(created).toHaveLength(1);
      expect(created[0]!.user.isAdmin).toBe(true);
      expect(created[0]!.key.ownerId).toBe(created[0]!.user.id);
      const later = await store.bootstrapAdmin({ ...newUserInput({ username: "admin2", isAdmin: true }), key: newKeyFields().fields });
      expect(later).toBeNull();
      expect(await store.findUserByUsername("admin2")).toBeNull();
    });

    it("finds an active key by hash with its owner, and reports a revoked one", async () => {
      const user = await store.createUser(newUserInput());
      const { secret, fields } = newKeyFields();
      const key = await store.createApiKey({ ...fields, ownerId: user.id });
      expect(key).toMatchObject({ id: fields.id, ownerId: user.id, revokedAt: null, lastUsedAt: null });

      const found = await store.findApiKeyByHash(hashApiKeySecret(secret));
      expect(found).toEqual({ key, user });
      expect(await store.findApiKeyByHash(hashApiKeySecret(generateApiKeySecret()))).toBeNull();

      expect(await store.revokeApiKey(user.id, key.id, 1234)).toBe(true);
      expect(await store.revokeApiKey(user.id, key.id, 5678)).toBe(true);
      expect(await store.findApiKeyByHash(fields.hash)).toEqual({ revoked: { ...key, revokedAt: 1234 } });
    });

    it("never lets one user revoke or list another user's keys", async () => {
      const alice = await store.createUser(newUserInput());
      const bob = await store.createUser(newUserInput());
      const { fields } = newKeyFields();
      const aliceKey = await store.createApiKey({ ...fields, ownerId: alice.id });

      expect(await store.revokeApiKey(bob.id, aliceKey.id, Date.now())).toBe(false);
      expect(await store.findApiKeyByHash(fields.hash)).toMatchObject({ key: { id: aliceKey.id, revokedAt: null } });
      expect(await store.listApiKeys(bob.id, parsePageRequest({}))).toEqual({ items: [], totalCount: 0 });
      expect((await store.listApiKeys(alice.id, parsePageRequest({}))).items.map((k) => k.id)).toEqual([aliceKey.id]);
    });

    it("pages keys newest first with after and before cursors", async () => {
      const user = await store.createUser(newUserInput());
      const ids: string[] = [];
      for (let i = 0; i < 25; i++) {
        const { fields } = newKeyFields(1_700_000_000_000 + i);
        ids.push((await store.createApiKey({ ...fields, ownerId: user.id })).id);
      }
      const newestFirst = [...ids].reverse();

      const first = await store.listApiKeys(user.id, parsePageRequest({ limit: 10 }));
      expect(first.totalCount).toBe(25);
      expect(first.items.map((k) => k.id)).toEqual(newestFirst.slice(0, 10));

      const second = await store.listApiKeys(user.id, parsePageRequest({ limit: 10, after: first.items[9]!.id }));
      expect(second.items.map((k) => k.id)).toEqual(newestFirst.slice(10, 20));

      const third = await store.listApiKeys(user.id, parsePageRequest({ limit: 10, after: second.items[9]!.id }));
      expect(third.items.map((k) => k.id)).toEqual(newestFirst.slice(20));

      const back = await store.listApiKeys(user.id, parsePageRequest({ limit: 10, before: third.items[0]!.id }));
      expect(back.items.map((k) => k.id)).toEqual(newestFirst.slice(10, 20));
    });

    it("records when a key was last used", async () => {
      const user = await store.createUser(newUserInput());
      const { fields } = newKeyFields();
      await store.createApiKey({ ...fields, ownerId: user.id });
      await store.touchApiKey(fields.id, 42_000);
      const found = await store.findApiKeyByHash(fields.hash);
      expect(found && "key" in found ? found.key.lastUsedAt : undefined).toBe(42_000);
    });

    it("keeps what it wrote across a close and reopen", async () => {
      const user = await store.createUser(newUserInput());
      await store.close();
      store = await backend.open();
      expect(await store.findUser(user.id)).toEqual(user);
    });
  });
}
