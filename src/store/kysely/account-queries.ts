import type { Kysely, Selectable } from "kysely";
import type { ApiKey, User } from "../../domain/accounts.js";
import { ConflictError } from "../../domain/errors.js";
import type { PageRequest, PageSlice } from "../../domain/paging.js";
import type { ApiKeyRow, Database, UserRow } from "./schema.js";
import type { NewApiKeyFields, NewUser, Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { readIdPage } from "./id-paging.js";

type AccountQueries = Pick<
  Store,
  "createUser" | "bootstrapAdmin" | "findUser" | "findUserByUsername" | "updateUserEmail" | "countUsers" | "listUsers" | "createApiKey" | "findApiKeyByHash" | "listApiKeys" | "revokeApiKey" | "touchApiKey"
>;

/** Users and API keys. */
export function accountQueries({ db, isUniqueViolation }: QueryContext): AccountQueries {
  async function insertUser(trx: Kysely<Database>, input: NewUser): Promise<User> {
    try {
      await trx
        .insertInto("users")
        .values({
          id: input.id,
          username: input.username,
          email: input.email,
          is_admin: input.isAdmin ? 1 : 0,
          created_at: input.createdAt,
        })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError(`The username "${input.username}" is taken. Choose another one.`, { field: "username" });
      }
      throw error;
    }
    return { ...input };
  }

  async function insertApiKey(trx: Kysely<Database>, input: NewApiKeyFields & { ownerId: string }): Promise<ApiKey> {
    await trx
      .insertInto("api_keys")
      .values({
        id: input.id,
        owner_id: input.ownerId,
        name: input.name,
        hash: input.hash,
        prefix: input.prefix,
        created_at: input.createdAt,
        last_used_at: null,
        revoked_at: null,
      })
      .execute();
    return {
      id: input.id,
      ownerId: input.ownerId,
      name: input.name,
      prefix: input.prefix,
      createdAt: input.createdAt,
      lastUsedAt: null,
      revokedAt: null,
    };
  }

  return {
    createUser: (input) => insertUser(db, input),

    async bootstrapAdmin(input) {
      try {
        return await db.transaction().execute(async (trx) => {
          const existing = await trx.selectFrom("users").select("id").where("is_admin", "=", 1).limit(1).executeTakeFirst();
          if (existing) return null;
          const user = await insertUser(trx, input);
          const key = await insertApiKey(trx, { ...input.key, ownerId: user.id });
          return { user, key };
        });
      } catch (error) {
        // Another process bootstrapped at the same moment and took the username first.
        if (error instanceof ConflictError) return null;
        throw error;
      }
    },

    async findUser(userId) {
      const row = await db.selectFrom("users").selectAll().where("id", "=", userId).executeTakeFirst();
      return row ? toUser(row) : null;
    },

    async findUserByUsername(username) {
      const row = await db.selectFrom("users").selectAll().where("username", "=", username).executeTakeFirst();
      return row ? toUser(row) : null;
    },

    async updateUserEmail(userId, email) {
      await db.updateTable("users").set({ email }).where("id", "=", userId).execute();
      const row = await db.selectFrom("users").selectAll().where("id", "=", userId).executeTakeFirst();
      return row ? toUser(row) : null;
    },

    async countUsers() {
      const row = await db.selectFrom("users").select((eb) => eb.fn.countAll<number | string>().as("count")).executeTakeFirstOrThrow();
      return Number(row.count);
    },

    listUsers(page) {
      return readIdPage(
        page,
        async ({ cursor, order, limit }) => {
          let query = db.selectFrom("users").selectAll();
          if (cursor) query = query.where("id", cursor.op, cursor.id);
          return (await query.orderBy("id", order).limit(limit).execute()).map(toUser);
        },
        async () => Number((await db.selectFrom("users").select((eb) => eb.fn.countAll<number | string>().as("count")).executeTakeFirstOrThrow()).count),
      );
    },

    createApiKey: (input) => insertApiKey(db, input),

    async findApiKeyByHash(hash) {
      const row = await db
        .selectFrom("api_keys")
        .innerJoin("users", "users.id", "api_keys.owner_id")
        .select([
          "api_keys.id as key_id",
          "api_keys.name as key_name",
          "api_keys.prefix as key_prefix",
          "api_keys.created_at as key_created_at",
          "api_keys.last_used_at as key_last_used_at",
          "api_keys.revoked_at as key_revoked_at",
          "users.id as id",
          "users.username as username",
          "users.email as email",
          "users.is_admin as is_admin",
          "users.created_at as created_at",
        ])
        .where("api_keys.hash", "=", hash)
        .executeTakeFirst();
      if (!row) return null;
      const key: ApiKey = {
        id: row.key_id,
        ownerId: row.id,
        name: row.key_name,
        prefix: row.key_prefix,
        createdAt: Number(row.key_created_at),
        lastUsedAt: toNullableNumber(row.key_last_used_at),
        revokedAt: toNullableNumber(row.key_revoked_at),
      };
      if (key.revokedAt !== null) return { revoked: key };
      return { key, user: toUser(row) };
    },

    listApiKeys(ownerId: string, page: PageRequest): Promise<PageSlice<ApiKey>> {
      return readIdPage(
        page,
        async ({ cursor, order, limit }) => {
          let query = db.selectFrom("api_keys").selectAll().where("owner_id", "=", ownerId);
          if (cursor) query = query.where("id", cursor.op, cursor.id);
          const rows = await query.orderBy("id", order).limit(limit).execute();
          return rows.map(toApiKey);
        },
        async () => {
          const { count } = await db
            .selectFrom("api_keys")
            .select((eb) => eb.fn.countAll<number>().as("count"))
            .where("owner_id", "=", ownerId)
            .executeTakeFirstOrThrow();
          return Number(count);
        },
      );
    },

    async revokeApiKey(ownerId, keyId, at) {
      const key = await db
        .selectFrom("api_keys")
        .select(["id", "revoked_at"])
        .where("id", "=", keyId)
        .where("owner_id", "=", ownerId)
        .executeTakeFirst();
      if (!key) return false;
      if (key.revoked_at === null) {
        await db
          .updateTable("api_keys")
          .set({ revoked_at: at })
          .where("id", "=", keyId)
          .where("owner_id", "=", ownerId)
          .where("revoked_at", "is", null)
          .execute();
      }
      return true;
    },

    async touchApiKey(keyId, at) {
      await db.updateTable("api_keys").set({ last_used_at: at }).where("id", "=", keyId).execute();
    },
  };
}

function toUser(row: Pick<Selectable<UserRow>, "id" | "username" | "email" | "is_admin" | "created_at">): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    isAdmin: Number(row.is_admin) === 1,
    createdAt: Number(row.created_at),
  };
}

function toApiKey(row: Selectable<ApiKeyRow>): ApiKey {
  return {
    id: row.id,
    ownerId: row.owner_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: Number(row.created_at),
    lastUsedAt: toNullableNumber(row.last_used_at),
    revokedAt: toNullableNumber(row.revoked_at),
  };
}

function toNullableNumber(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}
