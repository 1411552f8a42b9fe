import { Link } from "@tanstack/react-router";
import { CopyButton } from "../../components/CopyButton";
import { EmptyState } from "../../components/EmptyState";
import { PagedTable, type Column } from "../../components/PagedTable";
import { RelativeTime } from "../../components/RelativeTime";
import { listSources, sourceKeys, type SourceListItem } from "./api";

const columns: Array<Column<SourceListItem>> = [
  {
    header: "Name",
    cell: (source) => (
      <Link to="/sources/$id" params={{ id: source.id }}>
        {source.name}
      </Link>
    ),
  },
  { header: "Component", cell: (source) => source.component_key ?? <span className="muted">own code</span> },
  { header: "Active", cell: (source) => (source.active ? "yes" : <span className="muted">no</span>) },
  {
    header: "Endpoint",
    cell: (source) =>
      source.endpoint_url ? (
        <span className="endpoint">
          <code>{source.endpoint_url}</code> <CopyButton value={source.endpoint_url} label="Copy URL" />
        </span>
      ) : (
        <span className="muted">none</span>
      ),
  },
  // Being added to the API's source view: shown once the server answers them.
  { header: "Last event", cell: (source) => <RelativeTime value={source.last_event_at} />, showIf: (rows) => rows.some((source) => source.last_event_at !== undefined) },
  { header: "Events", cell: (source) => (source.event_count ?? 0).toLocaleString(), showIf: (rows) => rows.some((source) => typeof source.event_count === "number") },
];

/** Every source of the user, paged. */
export function SourcesPage() {
  return (
    <section aria-labelledby="sources-title">
      <div className="page-header">
        <h1 id="sources-title">Sources</h1>
        <Link to="/sources/new" className="button primary">
          Deploy a source
        </Link>
      </div>
      <PagedTable
        queryKey={sourceKeys.list()}
        fetchPage={(params, signal) => listSources(params, signal)}
        columns={columns}
        rowKey={(source) => source.id}
        caption="Sources"
        refetchInterval={15_000}
        empty={
          <EmptyState title="No sources yet">
            <p>
              A source turns HTTP requests or a timer into events. <Link to="/sources/new">Deploy one</Link>, or run <code>runnel deploy</code>.
            </p>
          </EmptyState>
        }
      />
    </section>
  );
}
