import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { apiKeyPrefix, generateApiKeySecret, hashApiKeySecret } from "../../src/domain/accounts.js";
import { newId } from "../../src/domain/ids.js";
import type { NewSession, Store } from "../../src/store/store.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";

/** The console's sessions and sign-in links half of the Store contract (table `sessions`, migration 0017). */
export function describeSessionContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, sessions: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
    let ownerId: string;
    let keyId: string;

    beforeEach(async () => {
      backend = await makeBackend();
      store = await backend.open();
      ownerId = (await store.createUser(newUserInput())).id;
      const secret = generateApiKeySecret();
      keyId = (await store.createApiKey({ id: newId("apiKey"), ownerId, name: "k", hash: hashApiKeySecret(secret), prefix: apiKeyPrefix(secret), createdAt: Date.now() })).id;
    });
    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    const session = (overrides: Partial<NewSession> = {}): NewSession => ({
      id: newId("session"),
      kind: "session",
      tokenHash: `hash-${newId("session")}`,
      ownerId,
      apiKeyId: keyId,
      createdAt: 1_000,
      expiresAt: 10_000,
      ...overrides,
    });

    it("keeps a session by its token's hash, durably, touches and deletes it", async () => {
      const saved = session();
      await store.createSession(saved);
      await store.close();
      store = await backend.open();
      expect(await store.findSession(saved.tokenHash)).toEqual({ id: saved.id, ownerId, apiKeyId: keyId, createdAt: 1_000, lastSeenAt: 1_000, expiresAt: 10_000, keyRevoked: false });
      await store.touchSession(saved.id, 2_000);
      expect((await store.findSession(saved.tokenHash))?.lastSeenAt).toBe(2_000);
      await store.revokeApiKey(ownerId, keyId, 3_000);
      expect((await store.findSession(saved.tokenHash))?.keyRevoked).toBe(true);
      await store.deleteSession(saved.id);
      expect(await store.findSession(saved.tokenHash)).toBeNull();
    });

    it("uses a sign-in link once, and never after it expires; a link is not a session", async () => {
      const link = session({ kind: "sign_in_link", expiresAt: 5_000 });
      const late = session({ kind: "sign_in_link", expiresAt: 5_000 });
      await store.createSession(link);
      await store.createSession(late);
      expect(await store.findSession(link.tokenHash)).toBeNull();
      const results = await Promise.all([store.useSignInLink(link.tokenHash, 4_000), store.useSignInLink(link.tokenHash, 4_000)]);
      expect(results.filter((result) => result !== null)).toEqual([{ ownerId, apiKeyId: keyId }]);
      expect(await store.useSignInLink(link.tokenHash, 4_001)).toBeNull();
      expect(await store.useSignInLink(late.tokenHash, 5_000)).toBeNull();
      expect(await store.useSignInLink("no-such-hash", 1)).toBeNull();
    });

    it("forgets what expired", async () => {
      const old = session({ expiresAt: 5_000 });
      const current = session({ expiresAt: 50_000 });
      await store.createSession(old);
      await store.createSession(current);
      await store.deleteExpiredSessions(5_000);
      expect(await store.findSession(old.tokenHash)).toBeNull();
      expect(await store.findSession(current.tokenHash)).not.toBeNull();
    });
  });
}
