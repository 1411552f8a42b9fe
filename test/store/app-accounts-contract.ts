import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AppAccount } from "../../src/domain/app-accounts.js";
import { newId } from "../../src/domain/ids.js";
import type { Store } from "../../src/store/store.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";

function accountFor(ownerId: string, at: number, overrides: Partial<AppAccount> = {}): AppAccount {
  return { id: newId("appAccount", at), ownerId, app: "github", name: "work", sealedFields: "enc:v1:a.b.c", expiresAt: at + 3_600_000, health: "ok", healthMessage: null, createdAt: at, updatedAt: at, ...overrides };
}

/** The apps half of the Store contract: added apps, OAuth clients, connected accounts and one-time OAuth flows. */
export function describeAppAccountsContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, apps and accounts: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
    let ownerId: string;
    let otherId: string;

    beforeEach(async () => {
      backend = await makeBackend();
      store = await backend.open();
      ownerId = (await store.createUser(newUserInput())).id;
      otherId = (await store.createUser(newUserInput())).id;
    });

    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    it("keeps an owner's accounts from every other user, updates and deletes them", async () => {
      const at = Date.now();
      const account = accountFor(ownerId, at);
      await store.createAppAccount(account);
      await store.createAppAccount(accountFor(otherId, at + 1, { name: "theirs" }));
      expect(await store.findAppAccount(ownerId, account.id)).toEqual(account);
      expect(await store.findAppAccount(otherId, account.id)).toBeNull();
      expect((await store.listAppAccounts(ownerId)).map((listed) => listed.id)).toEqual([account.id]);

      const marked = { ...account, health: "needs_reconnect" as const, healthMessage: "revoked", expiresAt: null, updatedAt: at + 5 };
      expect(await store.updateAppAccount({ ...marked, ownerId: otherId })).toBe(false);
      expect(await store.updateAppAccount(marked)).toBe(true);
      expect(await store.findAppAccount(ownerId, account.id)).toEqual(marked);
      expect(await store.deleteAppAccount(otherId, account.id)).toBe(false);
      expect(await store.deleteAppAccount(ownerId, account.id)).toBe(true);
      expect(await store.listAppAccounts(ownerId)).toEqual([]);
    });

    it("leases an account's refresh to one holder at a time, and lets a lapsed lease be taken over", async () => {
      const at = Date.now();
      const account = accountFor(ownerId, at);
      await store.createAppAccount(account);
      expect(await store.findAppAccountRefresh(ownerId, account.id)).toEqual({ account, lease: null, lastFailure: null });
      expect(await store.findAppAccountRefresh(otherId, account.id)).toBeNull();
      expect(await store.takeAccountRefreshLease(otherId, account.id, "intruder", at, at + 20_000)).toBe(false);

      // Two processes at the same moment: one gets it.
      const [first, second] = await Promise.all([store.takeAccountRefreshLease(ownerId, account.id, "a", at, at + 20_000), store.takeAccountRefreshLease(ownerId, account.id, "b", at, at + 20_000)]);
      expect([first, second].filter(Boolean)).toHaveLength(1);
      const holder = first ? "a" : "b";
      const other = first ? "b" : "a";
      expect((await store.findAppAccountRefresh(ownerId, account.id))!.lease).toEqual({ holder, until: at + 20_000 });
      // Refused while held, up to its last millisecond; a release by someone else changes nothing.
      expect(await store.takeAccountRefreshLease(ownerId, account.id, other, at + 20_000, at + 40_000)).toBe(false);
      await store.releaseAccountRefreshLease(ownerId, account.id, other, { message: "not mine", at });
      expect(await store.findAppAccountRefresh(ownerId, account.id)).toMatchObject({ lease: { holder }, lastFailure: null });

      // The holder died: once its lease lapsed, another takes it over.
      expect(await store.takeAccountRefreshLease(ownerId, account.id, "c", at + 20_001, at + 40_001)).toBe(true);
      expect((await store.findAppAccountRefresh(ownerId, account.id))!.lease).toEqual({ holder: "c", until: at + 40_001 });

      // A failed refresh ends the lease and says why; the next lease clears the error.
      const failure = { message: "the provider could not be reached", at: at + 20_005 };
      await store.releaseAccountRefreshLease(ownerId, account.id, "c", failure);
      expect(await store.findAppAccountRefresh(ownerId, account.id)).toEqual({ account, lease: null, lastFailure: failure });
      expect(await store.takeAccountRefreshLease(ownerId, account.id, "d", at + 20_002, at + 40_002)).toBe(true);
      expect((await store.findAppAccountRefresh(ownerId, account.id))!.lastFailure).toBeNull();

      // The new tokens are written, ending the lease, only over the fields they were refreshed from.
      const refreshed = { ...account, sealedFields: "enc:v1:new.tokens", expiresAt: at + 7_200_000, updatedAt: at + 3 };
      expect(await store.saveRefreshedAppAccount({ ...refreshed, sealedFields: "enc:v1:stale" }, "enc:v1:not-the-current-fields", "d")).toBe(false);
      expect((await store.findAppAccount(ownerId, account.id))!.sealedFields).toBe(account.sealedFields);
      expect(await store.saveRefreshedAppAccount(refreshed, account.sealedFields, "d")).toBe(true);
      expect(await store.findAppAccountRefresh(ownerId, account.id)).toEqual({ account: refreshed, lease: null, lastFailure: null });

      // Saved by a holder whose lease was taken over meanwhile: the tokens are written, the new holder's lease stays.
      expect(await store.takeAccountRefreshLease(ownerId, account.id, "e", at + 50_000, at + 70_000)).toBe(true);
      const again = { ...refreshed, sealedFields: "enc:v1:newer.tokens", updatedAt: at + 4 };
      expect(await store.saveRefreshedAppAccount(again, refreshed.sealedFields, "d")).toBe(true);
      expect(await store.findAppAccountRefresh(ownerId, account.id)).toEqual({ account: again, lease: { holder: "e", until: at + 70_000 }, lastFailure: null });
    });

    it("hands out an OAuth flow once, and never an expired one", async () => {
      const at = Date.now();
      const flow = { stateHash: "a".repeat(64), ownerId, app: "github", name: "work", accountId: null, sealedVerifier: "enc:v1:v", expiresAt: at + 600_000, createdAt: at };
      await store.createOAuthFlow(flow);
      await store.createOAuthFlow({ ...flow, stateHash: "b".repeat(64), expiresAt: at - 1 });
      const [first, second] = await Promise.all([store.takeOAuthFlow(flow.stateHash, at), store.takeOAuthFlow(flow.stateHash, at)]);
      expect([first, second].filter((taken) => taken !== null)).toEqual([flow]);
      expect(await store.takeOAuthFlow("b".repeat(64), at)).toBeNull();
    });

    it("stores added apps once and OAuth clients by app, replaced on a second put", async () => {
      const app = { slug: "my-crm", name: "My CRM", shipped: false, auth: { type: "keys" as const, fields: [{ name: "api_key", label: "API key", secret: true, optional: false }] } };
      expect(await store.createApp(app, ownerId, Date.now())).toBe(true);
      expect(await store.createApp(app, ownerId, Date.now())).toBe(false);
      expect(await store.listStoredApps()).toEqual([app]);
      await store.putOAuthClient({ app: "github", clientId: "one", sealedSecret: "enc:v1:1", updatedAt: 1 });
      await store.putOAuthClient({ app: "github", clientId: "two", sealedSecret: "enc:v1:2", updatedAt: 2 });
      expect(await store.findOAuthClient("github")).toEqual({ app: "github", clientId: "two", sealedSecret: "enc:v1:2", updatedAt: 2 });
      expect(await store.listOAuthClients()).toHaveLength(1);
      expect(await store.findOAuthClient("gitlab")).toBeNull();
    });
  });
}
