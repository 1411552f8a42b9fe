import type { Logger } from "pino";
import { checkStoreKey, checkStoreName, checkStoreValue, checkTtl, DATA_STORE_LIMITS, type DataStoreRecord, type DataStoreSummary } from "../../domain/data-stores.js";
import { NotFoundError, RunnelError, ValidationError } from "../../domain/errors.js";
import type { PageSlice } from "../../domain/paging.js";
import type { DataStoreHandler } from "../../sandbox/call-collector.js";
import type { DataStoreRequest } from "../../sandbox/protocol.js";
import type { Store } from "../../store/store.js";

export interface DataStoresServiceOptions {
  store: Store;
  logger: Logger;
  now?: () => number;
}

/**
 * The user's named data stores, for the API (list, read, edit) and for
 * components (`data_store` props, whose calls the sandbox hands here). Every
 * operation takes the owner's id: a store is reached only through its owner.
 * A component's calls reach only the stores its props name.
 */
export class DataStoresService {
  private readonly now: () => number;

  constructor(private readonly options: DataStoresServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  list(ownerId: string): Promise<DataStoreSummary[]> {
    return this.options.store.listDataStores(ownerId, this.now());
  }

  /** A page of the store's records by key; NotFound when the owner has no store of that name. */
  async records(ownerId: string, name: string, page: { limit: number; after?: string | undefined }): Promise<PageSlice<DataStoreRecord>> {
    const slice = await this.options.store.dataStoreRecords(ownerId, checkStoreName(name), page, this.now());
    if (!slice) throw new NotFoundError("data store", name, "id or name");
    return slice;
  }

  async get(ownerId: string, name: string, key: string): Promise<DataStoreRecord> {
    const record = await this.options.store.dataStoreGet(ownerId, checkStoreName(name), checkStoreKey(key), this.now());
    if (!record) throw new NotFoundError(`record in data store "${name}"`, key, "id or name");
    return record;
  }

  /** Writes a record (the store is made on its first write); `ttl` in seconds. Returns it as stored. */
  async put(ownerId: string, name: string, key: string, value: unknown, ttl: unknown): Promise<DataStoreRecord> {
    const checkedName = checkStoreName(name);
    const checkedKey = checkStoreKey(key);
    const json = checkStoreValue(JSON.stringify(value));
    const now = this.now();
    const seconds = checkTtl(ttl);
    const expiresAt = seconds === null ? null : now + Math.round(seconds * 1000);
    await this.options.store.dataStoreSet(ownerId, checkedName, { key: checkedKey, json, expiresAt }, now);
    return { key: checkedKey, value: JSON.parse(json), expiresAt, updatedAt: now };
  }

  async remove(ownerId: string, name: string, key: string): Promise<void> {
    const removed = await this.options.store.dataStoreDelete(ownerId, checkStoreName(name), checkStoreKey(key), this.now());
    if (!removed) throw new NotFoundError(`record in data store "${name}"`, key, "id or name");
  }

  async drop(ownerId: string, name: string): Promise<void> {
    if (!(await this.options.store.deleteDataStore(ownerId, checkStoreName(name)))) throw new NotFoundError("data store", name, "id or name");
  }

  /**
   * The handler of a call's `data_store` requests: the owner's stores that
   * `names` lists (the values of the call's data_store props), nothing else.
   */
  handlerFor(ownerId: string, names: Iterable<string>): DataStoreHandler {
    const allowed = new Set(names);
    return async (name, request) => {
      if (!allowed.has(name)) {
        throw new Error(`This component's props do not name the data store "${name.slice(0, 100)}"; a component reaches only the stores its data_store props are configured with.`);
      }
      try {
        return await this.carryOut(ownerId, name, request);
      } catch (error) {
        // What the user can act on (a limit, a bad key) is told as it is; anything else is the server's problem.
        if (error instanceof RunnelError) throw new Error(error.message);
        this.options.logger.error({ err: error, ownerId, store: name, op: request.op }, "a data store call failed");
        throw new Error(`The data store "${name}" could not be reached (${request.op}); try again.`);
      }
    };
  }

  private async carryOut(ownerId: string, name: string, request: DataStoreRequest): Promise<unknown> {
    const { store } = this.options;
    const now = this.now();
    checkStoreName(name);
    switch (request.op) {
      case "get":
        return (await store.dataStoreGet(ownerId, name, checkStoreKey(request.key), now))?.value;
      case "has":
        return (await store.dataStoreGet(ownerId, name, checkStoreKey(request.key), now)) !== null;
      case "set": {
        const seconds = checkTtl(request.ttl);
        const record = { key: checkStoreKey(request.key), json: checkStoreValue(validJson(request.value)), expiresAt: seconds === null ? null : now + Math.round(seconds * 1000) };
        await store.dataStoreSet(ownerId, name, record, now);
        return undefined;
      }
      case "delete":
        await store.dataStoreDelete(ownerId, name, checkStoreKey(request.key), now);
        return undefined;
      case "keys":
        return ((await store.dataStoreRecords(ownerId, name, { limit: DATA_STORE_LIMITS.keysPerStore }, now))?.items ?? []).map((record) => record.key);
      case "entries":
        return ((await store.dataStoreRecords(ownerId, name, { limit: DATA_STORE_LIMITS.keysPerStore }, now))?.items ?? []).map((record) => [record.key, record.value]);
      case "clear":
        await store.dataStoreClear(ownerId, name);
        return undefined;
    }
  }
}

/** The runner sends a value as JSON text; a runner's word is not trusted, so it is parsed (and re-serialized) here. */
function validJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    throw new ValidationError("value", "The value is not JSON.");
  }
}
