import { pageOfArray } from "../../api/array-page";
import { accountKeys, listAccounts } from "../../api/accounts";
import type { AccountView } from "../../api/types";
import { EmptyState } from "../../components/EmptyState";
import { PagedTable, type Column } from "../../components/PagedTable";
import { RelativeTime } from "../../components/RelativeTime";
import { accountsRoute } from "./routes";
import { AccountActions } from "./AccountActions";
import { ConnectAccountForm } from "./ConnectAccountForm";
import "./accounts.css";

const columns: Array<Column<AccountView>> = [
  { header: "App", cell: (account) => account.app_name },
  { header: "Name", cell: (account) => account.name },
  {
    header: "Health",
    cell: (account) =>
      account.health === "ok" ? (
        <span className="health-ok">Connected</span>
      ) : (
        <span>
          <span className="health-bad">Must be reconnected</span>
          {account.health_message ? <span className="health-message">{account.health_message}</span> : null}
        </span>
      ),
  },
  { header: "Created", cell: (account) => <RelativeTime value={account.created_at} /> },
  { header: "Actions", cell: (account) => <AccountActions account={account} /> },
];

/** The user's connected accounts of apps (issue 17): what app props of sources and steps are configured with. */
export function AccountsPage() {
  const { app } = accountsRoute.useSearch();
  return (
    <section aria-labelledby="accounts-title">
      <div className="page-header">
        <h1 id="accounts-title">Accounts</h1>
      </div>
      <p className="muted">
        Accounts of the apps your components use (GitHub, Slack, an API key…). Their tokens and keys stay encrypted on the server: choose an account on an app prop, and the code gets them as{" "}
        <code>this.&lt;app&gt;.$auth</code>.
      </p>
      <ConnectAccountForm initialApp={app} />
      <PagedTable
        queryKey={accountKeys.list("page")}
        fetchPage={async (params, signal) => pageOfArray(await listAccounts(undefined, signal), params)}
        columns={columns}
        rowKey={(account) => account.id}
        caption="Connected accounts"
        refetchInterval={15_000}
        empty={
          <EmptyState title="No account connected yet">
            <p>Connect one above, or run <code>runnel accounts connect &lt;app&gt;</code>.</p>
          </EmptyState>
        }
      />
    </section>
  );
}
