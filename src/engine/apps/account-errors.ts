/** The AuthErrors a run gets for a connected account it cannot use, worded once for every place that refuses one. */
import { describeAccount, type AppAccount } from "../../domain/app-accounts.js";
import type { AppDefinition } from "../../domain/apps.js";
import { AuthError } from "../../domain/errors.js";

/** "The GitHub account 'work'", to start a sentence with. */
export function accountLabel(app: AppDefinition, account: AppAccount): string {
  const text = describeAccount(app.name, account.name);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function reconnectError(app: AppDefinition, account: AppAccount, why: string | null): AuthError {
  return new AuthError(
    `${accountLabel(app, account)} must be reconnected${why ? `: ${why}` : ""}. Run runnel accounts reconnect ${account.id} (or reconnect it in the console's Accounts page).`,
    { app: app.slug, account: account.id },
  );
}

export function deletedAccountError(accountId: string): AuthError {
  return new AuthError(`The connected account ${accountId} no longer exists (it was deleted).`, { account: accountId });
}
