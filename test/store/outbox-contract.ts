import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { OutboxEntry } from "../../src/domain/outbox.js";
import { parsePageRequest } from "../../src/domain/paging.js";
import type { Store } from "../../src/store/store.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";

function mailFor(ownerId: string, at: number, overrides: Partial<OutboxEntry> = {}): OutboxEntry {
  return {
    id: newId("mail", at),
    ownerId,
    to: "ada@example.com",
    subject: `subject at ${at}`,
    text: "body",
    html: null,
    kind: "send-email",
    workflowId: null,
    status: "outbox",
    error: null,
    createdAt: at,
    sentAt: null,
    ...overrides,
  };
}

/** The outbox half of the Store contract: mails and the once-a-day error notices. */
export function describeOutboxContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, outbox: ${name}`, () => {
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

    it("adds a mail, marks it and reads it back, durably", async () => {
      const at = Date.now();
      const mail = mailFor(ownerId, at, { html: "<p>body</p>", kind: "error-notification", workflowId: newId("workflow"), to: null });
      expect(await store.addMail(mail)).toEqual(mail);
      expect((await store.listOutbox(ownerId, parsePageRequest({}))).items).toEqual([mail]);

      await store.markMail(mail.id, { status: "failed", error: "550 no such user" });
      expect((await store.listOutbox(ownerId, parsePageRequest({}))).items[0]).toMatchObject({ status: "failed", error: "550 no such user", sentAt: null });

      await store.markMail(mail.id, { status: "sent", sentAt: at + 5 });
      await store.close();
      store = await backend.open();
      expect((await store.listOutbox(ownerId, parsePageRequest({}))).items).toEqual([{ ...mail, status: "sent", error: null, sentAt: at + 5 }]);
    });

    it("lists only the owner's mails, newest first, with after and before cursors", async () => {
      const base = Date.now() - 100_000;
      const mails = Array.from({ length: 25 }, (_, i) => mailFor(ownerId, base + i * 10));
      for (const mail of mails) await store.addMail(mail);
      await store.addMail(mailFor(otherId, base + 5));
      const newestFirst = mails.map((mail) => mail.id).reverse();

      const first = await store.listOutbox(ownerId, parsePageRequest({ limit: 10 }));
      expect(first.totalCount).toBe(25);
      expect(first.items.map((mail) => mail.id)).toEqual(newestFirst.slice(0, 10));
      const second = await store.listOutbox(ownerId, parsePageRequest({ limit: 10, after: first.items[9]!.id }));
      expect(second.items.map((mail) => mail.id)).toEqual(newestFirst.slice(10, 20));
      const third = await store.listOutbox(ownerId, parsePageRequest({ limit: 10, after: second.items[9]!.id }));
      expect(third.items.map((mail) => mail.id)).toEqual(newestFirst.slice(20));
      const back = await store.listOutbox(ownerId, parsePageRequest({ limit: 10, before: third.items[0]!.id }));
      expect(back.items.map((mail) => mail.id)).toEqual(newestFirst.slice(10, 20));

      const other = await store.listOutbox(otherId, parsePageRequest({}));
      expect(other.totalCount).toBe(1);
      expect(other.items.every((mail) => mail.ownerId === otherId)).toBe(true);
      expect(await store.listOutbox(newId("user"), parsePageRequest({}))).toEqual({ items: [], totalCount: 0 });
    });

    it("claims an error notice once per owner, workflow, code and day", async () => {
      const workflowId = newId("workflow");
      expect(await store.claimDailyNotice(ownerId, workflowId, "TypeError", "2030-01-02")).toBe(true);
      expect(await store.claimDailyNotice(ownerId, workflowId, "TypeError", "2030-01-02")).toBe(false);
      // Each part of the key is its own notice.
      expect(await store.claimDailyNotice(ownerId, workflowId, "TypeError", "2030-01-03")).toBe(true);
      expect(await store.claimDailyNotice(ownerId, workflowId, "TIMEOUT", "2030-01-02")).toBe(true);
      expect(await store.claimDailyNotice(ownerId, newId("workflow"), "TypeError", "2030-01-02")).toBe(true);
      expect(await store.claimDailyNotice(otherId, workflowId, "TypeError", "2030-01-02")).toBe(true);
      await store.close();
      store = await backend.open();
      expect(await store.claimDailyNotice(ownerId, workflowId, "TypeError", "2030-01-02")).toBe(false);
    });

    it("gives exactly one of many concurrent claims of one notice", async () => {
      // A second store on the same namespace: two pools, as two processes would have.
      const second = await backend.open();
      try {
        const workflowId = newId("workflow");
        const claims = await Promise.all(
          Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? store : second).claimDailyNotice(ownerId, workflowId, "Error", "2030-06-01")),
        );
        expect(claims.filter(Boolean)).toHaveLength(1);
      } finally {
        await second.close();
      }
    });

    it("refuses a mail for a user that does not exist", async () => {
      await expect(store.addMail(mailFor(newId("user"), Date.now()))).rejects.toThrow();
    });
  });
}
