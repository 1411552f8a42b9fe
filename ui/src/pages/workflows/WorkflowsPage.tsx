import { Link } from "@tanstack/react-router";
import { EmptyState } from "../../components/EmptyState";
import { PagedTable, type Column } from "../../components/PagedTable";
import { RelativeTime } from "../../components/RelativeTime";
import { listWorkflows, workflowKeys } from "./api";
import { TriggerSummary } from "./TriggerSummary";
import type { WorkflowListItem } from "./types";

const columns: Array<Column<WorkflowListItem>> = [
  {
    header: "Name",
    cell: (workflow) => (
      <Link to="/workflows/$id" params={{ id: workflow.id }}>
        {workflow.name}
      </Link>
    ),
  },
  { header: "Trigger", cell: (workflow) => <TriggerSummary workflow={workflow} /> },
  { header: "Active", cell: (workflow) => (workflow.active ? "Active" : <span className="muted">Paused</span>), className: "narrow" },
  { header: "Last run", cell: (workflow) => ("last_run_at" in workflow ? <RelativeTime value={workflow.last_run_at ?? null} /> : <span className="muted">–</span>) },
  { header: "Runs (24 h)", cell: (workflow) => count(workflow.runs_24h), className: "narrow" },
  { header: "Errors (24 h)", cell: (workflow) => (workflow.errors_24h ? <strong className="error-count">{workflow.errors_24h}</strong> : count(workflow.errors_24h)), className: "narrow" },
];

/** Older servers leave the counts out: a dash, not a misleading 0. */
function count(value: number | undefined) {
  return value === undefined ? <span className="muted">–</span> : value;
}

/** /workflows: every workflow of the user, newest first, paged. */
export function WorkflowsPage() {
  return (
    <section aria-labelledby="workflows-title">
      <div className="page-header">
        <h1 id="workflows-title">Workflows</h1>
        <Link to="/workflows/new" className="button primary">
          Create a workflow
        </Link>
      </div>
      <PagedTable
        queryKey={workflowKeys.list}
        fetchPage={listWorkflows}
        columns={columns}
        rowKey={(workflow) => workflow.id}
        caption="Workflows"
        refetchInterval={15_000}
        empty={
          <EmptyState title="No workflows yet.">
            <p>A workflow runs steps of code on each event of its trigger: an HTTP request, a timer, or a source's events.</p>
            <Link to="/workflows/new" className="button primary">
              Create a workflow
            </Link>
          </EmptyState>
        }
      />
    </section>
  );
}
