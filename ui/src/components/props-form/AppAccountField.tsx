import { useQuery } from "@tanstack/react-query";
import { accountKeys, listAccounts } from "../../api/accounts";
import { ErrorMessage } from "../ErrorMessage";

export interface AppAccountFieldProps {
  id: string;
  describedBy: string | undefined;
  invalid: boolean | undefined;
  /** The app's slug (the prop's `app`). */
  app: string;
  /** The picked account's id (`apn_…`); the form sends it as `{ authProvisionId }`. */
  value: string | undefined;
  onChange: (value: string | undefined) => void;
  disabled?: boolean | undefined;
}

/**
 * An app prop: one of the user's connected accounts of that app, and a way to
 * connect a new one. The Accounts page opens in a new tab so the form being
 * filled in is kept; the list is fetched again when the user comes back.
 */
export function AppAccountField({ id, describedBy, invalid, app, value, onChange, disabled }: AppAccountFieldProps) {
  const accounts = useQuery({ queryKey: accountKeys.list(app), queryFn: ({ signal }) => listAccounts(app, signal), refetchOnWindowFocus: "always" });
  const connectHref = `/accounts?app=${encodeURIComponent(app)}`;
  return (
    <div className="app-account-field">
      {accounts.isError ? <ErrorMessage error={accounts.error} title="Could not load your accounts." /> : null}
      <select
        id={id}
        aria-describedby={describedBy}
        aria-invalid={invalid}
        disabled={disabled || accounts.isPending}
        value={value ?? ""}
        onChange={(event) => onChange(event.target.value === "" ? undefined : event.target.value)}
      >
        <option value="">{accounts.isPending ? "Loading accounts…" : accounts.data?.length ? "Choose an account…" : "No account connected yet"}</option>
        {(accounts.data ?? []).map((account) => (
          <option key={account.id} value={account.id}>
            {account.health === "ok" ? account.name : `${account.name} (must be reconnected)`}
          </option>
        ))}
      </select>
      <p className="app-account-actions">
        <a href={connectHref} target="_blank" rel="noopener">
          Connect a new one
        </a>{" "}
        <button type="button" onClick={() => void accounts.refetch()} disabled={accounts.isFetching}>
          {accounts.isFetching ? "Refreshing…" : "Refresh the list"}
        </button>
      </p>
    </div>
  );
}
