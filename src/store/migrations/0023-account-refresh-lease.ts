import type { Kysely, Migration } from "kysely";

/**
 * The refresh lease of a connected account (issue 17): server processes
 * sharing a database refresh an OAuth token once between them, since a
 * provider that rotates refresh tokens refuses the second use of one. The
 * process about to call the token endpoint takes the lease (`refreshing_by`
 * its holder id, `refreshing_until` when it lapses, so a dead holder's is
 * taken over); the others wait for the row's tokens to change.
 * `refresh_error`, `refresh_failed_at`: why and when the last leased
 * refresh failed, when it failed without marking the account (the provider
 * unreachable), so that those who waited report it instead of timing out,
 * and runs right after it do not each ask the provider again; cleared when
 * a lease is taken.
 */
export const accountRefreshLeaseMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("app_accounts").addColumn("refreshing_by", "text").execute();
    await db.schema.alterTable("app_accounts").addColumn("refreshing_until", "bigint").execute();
    await db.schema.alterTable("app_accounts").addColumn("refresh_error", "text").execute();
    await db.schema.alterTable("app_accounts").addColumn("refresh_failed_at", "bigint").execute();
  },
};
