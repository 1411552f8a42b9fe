import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { accountKeys, listAccounts } from "../../api/accounts";
import { queryClient } from "../../api/query-client";

/** A connection under way at the provider: who, and since when (epoch seconds). */
export interface PendingConnection {
  appName: string;
  app: string;
  name: string;
  /** Set when reconnecting: the account keeps its id. */
  accountId?: string;
  authorizationUrl: string;
  since: number;
}

/**
 * After an OAuth start: the link to the provider (a real link the user
 * clicks, opened in a new tab so that no popup blocker stops it and this page
 * stays), and the accounts list polled until the callback has stored the account.
 */
export function OAuthContinue({ pending, onDone }: { pending: PendingConnection; onDone: () => void }) {
  const accounts = useQuery({ queryKey: accountKeys.list(), queryFn: ({ signal }) => listAccounts(undefined, signal), refetchInterval: 2_000 });
  const connected = (accounts.data ?? []).find(
    (account) =>
      (pending.accountId ? account.id === pending.accountId : account.app === pending.app && account.name === pending.name) && account.updated_at >= pending.since && account.health === "ok",
  );
  const connectedId = connected?.id;
  useEffect(() => {
    // The table and the props form's pickers show the new account at once.
    if (connectedId) void queryClient.invalidateQueries({ queryKey: accountKeys.all });
  }, [connectedId]);
  if (connected) {
    return (
      <div className="oauth-continue" role="status">
        <p>
          Your {pending.appName} account <strong>{connected.name}</strong> is connected.
        </p>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    );
  }
  return (
    <div className="oauth-continue">
      <p>
        <a className="button primary" href={pending.authorizationUrl} target="_blank" rel="noopener noreferrer">
          Continue to {pending.appName} to allow access
        </a>
      </p>
      <p className="muted" role="status">
        Waiting for {pending.appName}: sign in and allow access in the new tab; this page shows the account as soon as it is connected. The link works for a few minutes.
      </p>
      <button type="button" onClick={onDone}>
        Cancel
      </button>
    </div>
  );
}
