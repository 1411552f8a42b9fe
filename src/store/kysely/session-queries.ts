import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";

type SessionQueries = Pick<Store, "createSession" | "findSession" | "touchSession" | "deleteSession" | "useSignInLink" | "deleteExpiredSessions">;

/** Console sessions and one-time sign-in links (table `sessions`). */
export function sessionQueries({ db }: QueryContext): SessionQueries {
  return {
    async createSession(input) {
      await db
        .insertInto("sessions")
        .values({
          id: input.id,
          kind: input.kind,
          token_hash: input.tokenHash,
          owner_id: input.ownerId,
          api_key_id: input.apiKeyId,
          created_at: input.createdAt,
          last_seen_at: input.createdAt,
          expires_at: input.expiresAt,
          used_at: null,
        })
        .execute();
    },

    async findSession(tokenHash) {
      const row = await db
        .selectFrom("sessions")
        .innerJoin("api_keys", "api_keys.id", "sessions.api_key_id")
        .select([
          "sessions.id as id",
          "sessions.owner_id as owner_id",
          "sessions.api_key_id as api_key_id",
          "sessions.created_at as created_at",
          "sessions.last_seen_at as last_seen_at",
          "sessions.expires_at as expires_at",
          "api_keys.revoked_at as key_revoked_at",
        ])
        .where("sessions.token_hash", "=", tokenHash)
        .where("sessions.kind", "=", "session")
        .executeTakeFirst();
      if (!row) return null;
      return {
        id: row.id,
        ownerId: row.owner_id,
        apiKeyId: row.api_key_id,
        createdAt: Number(row.created_at),
        lastSeenAt: Number(row.last_seen_at),
        expiresAt: Number(row.expires_at),
        keyRevoked: row.key_revoked_at !== null,
      };
    },

    async touchSession(id, at) {
      await db.updateTable("sessions").set({ last_seen_at: at }).where("id", "=", id).execute();
    },

    async deleteSession(id) {
      await db.deleteFrom("sessions").where("id", "=", id).execute();
    },

    async useSignInLink(tokenHash, at) {
      // One statement marks the link used only if nobody did before: two exchanges racing get one session.
      const result = await db
        .updateTable("sessions")
        .set({ used_at: at })
        .where("token_hash", "=", tokenHash)
        .where("kind", "=", "sign_in_link")
        .where("used_at", "is", null)
        .where("expires_at", ">", at)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return null;
      const row = await db
        .selectFrom("sessions")
        .innerJoin("api_keys", "api_keys.id", "sessions.api_key_id")
        .select(["sessions.owner_id as owner_id", "sessions.api_key_id as api_key_id", "api_keys.revoked_at as key_revoked_at"])
        .where("sessions.token_hash", "=", tokenHash)
        .executeTakeFirst();
      if (!row || row.key_revoked_at !== null) return null;
      return { ownerId: row.owner_id, apiKeyId: row.api_key_id };
    },

    async deleteExpiredSessions(at) {
      await db.deleteFrom("sessions").where("expires_at", "<=", at).execute();
    },
  };
}
