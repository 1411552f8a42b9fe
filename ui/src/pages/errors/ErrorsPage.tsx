import { Link } from "@tanstack/react-router";
import { EmptyState } from "../../components/EmptyState";
import { PagedTable } from "../../components/PagedTable";
import { ErrorRouting } from "./ErrorRouting";
import { errorKeys, fetchWorkflows, type ListedWorkflow } from "./errors-api";
import "./errors.css";

/** Every workflow's errors, a click away; and where errors go (the global error workflow, notices by mail). */
export function ErrorsPage() {
  return (
    <section aria-labelledby="errors-title">
      <h1 id="errors-title">Errors</h1>
      <p className="muted">A failed run leaves an error in its workflow's <code>$errors</code>: open a workflow to inspect its errors and replay them.</p>
      <h2>Workflows</h2>
      <PagedTable<ListedWorkflow>
        queryKey={[...errorKeys.workflows, "errors-index"]}
        fetchPage={fetchWorkflows}
        caption="Workflows and their errors"
        rowKey={(workflow) => workflow.id}
        empty={
          <EmptyState title="No workflows yet.">
            Errors appear here once a <Link to="/workflows">workflow</Link> runs and fails.
          </EmptyState>
        }
        columns={[
          {
            header: "Workflow",
            cell: (workflow) => (
              <Link to="/errors/$workflowId" params={{ workflowId: workflow.id }}>
                {workflow.name}
              </Link>
            ),
          },
          {
            header: "Errors (24 h)",
            cell: (workflow) =>
              workflow.errors_24h === undefined ? <span className="muted">–</span> : <span className={workflow.errors_24h > 0 ? "error-count" : undefined}>{workflow.errors_24h}</span>,
          },
          {
            header: "Errors go to",
            cell: (workflow) =>
              workflow.is_error_workflow ? (
                <span className="muted">Its own errors are listed only</span>
              ) : workflow.settings.error_notifications ? (
                "The global error workflow"
              ) : (
                <span className="muted">Listed only (notifications off)</span>
              ),
          },
        ]}
      />
      <ErrorRouting />
    </section>
  );
}
