import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { RegistryEntry } from "../../src/domain/registry.js";
import type { SavedComponent } from "../../src/domain/sources.js";
import type { Store } from "../../src/store/store.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";

function componentFor(ownerId: string, code: string): SavedComponent {
  const now = Date.now();
  return {
    id: newId("savedComponent"),
    ownerId,
    name: "Send",
    version: "0.1.0",
    key: "app-send",
    kind: "action",
    code,
    codeHash: `h-${code}`,
    bundle: "module.exports = {}",
    bundleHash: `b-${code}`,
    bundleMap: null,
    lock: null,
    manifest: { props: {}, methods: [], hooks: [], hasRun: true, hasAdditionalProps: false },
    createdAt: now,
    updatedAt: now,
  };
}

/** The registry half of the Store contract. */
export function describeRegistryContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, registry: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
    let ownerId: string;
    let otherId: string;
    const entryFor = async (owner: string, key: string, version: string, code = `${key}@${version}`): Promise<RegistryEntry> => {
      const component = await store.saveComponent(componentFor(owner, code));
      return { ownerId: owner, key, version, componentId: component.id, kind: "action", publishedAt: Date.now() };
    };

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

    it("publishes a version once: publishing it again returns the first entry, untouched", async () => {
      const first = await entryFor(ownerId, "app-send", "1.0.0");
      expect(await store.publish(first)).toEqual({ entry: first, created: true });
      const other = await entryFor(ownerId, "app-send", "1.0.0", "other code");
      expect(await store.publish({ ...other, publishedAt: first.publishedAt + 5 })).toEqual({ entry: first, created: false });
      expect(await store.findPublished(ownerId, "app-send", "1.0.0")).toEqual(first);
    });

    it("lands a version once when publishes of it race", async () => {
      const entries = await Promise.all(Array.from({ length: 8 }, (_, i) => entryFor(ownerId, "app-send", "2.0.0", `code ${i}`)));
      const results = await Promise.all(entries.map((entry) => store.publish(entry)));
      expect(results.filter((result) => result.created)).toHaveLength(1);
      const winner = results.find((result) => result.created)!.entry;
      for (const result of results) expect(result.entry).toEqual(winner);
      expect(await store.listPublished(ownerId)).toEqual([winner]);
    });

    it("finds the highest version by semver precedence, not by text, and an exact version when asked", async () => {
      const published: Record<string, RegistryEntry> = {};
      for (const version of ["1.9.0", "1.10.0", "1.2.0", "2.0.0-beta.1"]) {
        published[version] = await entryFor(ownerId, "app-send", version);
        await store.publish(published[version]);
      }
      expect(await store.findPublished(ownerId, "app-send")).toEqual(published["1.10.0"]);
      expect(await store.findPublished(ownerId, "app-send", "1.9.0")).toEqual(published["1.9.0"]);
      expect(await store.findPublished(ownerId, "app-send", "2.0.0-beta.1")).toEqual(published["2.0.0-beta.1"]);
      expect(await store.findPublished(ownerId, "app-send", "3.0.0")).toBeNull();
      expect(await store.findPublished(ownerId, "app-other")).toBeNull();
    });

    it("keeps each owner's registry to that owner: the same key and version for two users are two entries", async () => {
      const mine = await entryFor(ownerId, "app-send", "1.0.0");
      const theirs = await entryFor(otherId, "app-send", "1.0.0");
      expect((await store.publish(mine)).created).toBe(true);
      expect((await store.publish(theirs)).created).toBe(true);
      expect(await store.findPublished(ownerId, "app-send")).toEqual(mine);
      expect(await store.findPublished(otherId, "app-send", "1.0.0")).toEqual(theirs);
      await store.publish(await entryFor(ownerId, "app-mine-only", "1.0.0"));
      expect(await store.findPublished(otherId, "app-mine-only")).toBeNull();
      expect((await store.listPublished(otherId)).map((entry) => entry.key)).toEqual(["app-send"]);
    });

    it("lists every version: keys alphabetically, each key's versions newest first", async () => {
      for (const [key, version] of [["b-key", "1.9.0"], ["a-key", "0.1.0"], ["b-key", "1.10.0"], ["b-key", "0.9.9"]] as const) {
        await store.publish(await entryFor(ownerId, key, version));
      }
      const listed = await store.listPublished(ownerId);
      expect(listed.map((entry) => `${entry.key}@${entry.version}`)).toEqual(["a-key@0.1.0", "b-key@1.10.0", "b-key@1.9.0", "b-key@0.9.9"]);
      expect(listed.every((entry) => entry.ownerId === ownerId && entry.kind === "action" && typeof entry.publishedAt === "number")).toBe(true);
      expect(await store.listPublished(otherId)).toEqual([]);
    });
  });
}
