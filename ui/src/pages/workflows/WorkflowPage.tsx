import { useMutation, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { queryClient } from "../../api/query-client";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { PagedTable, type Column } from "../../components/PagedTable";
import { PendingButton } from "../../components/PendingButton";
import { RelativeTime } from "../../components/RelativeTime";
import { JsonTree } from "../../components/JsonTree";
import { deleteWorkflow, getWorkflow, listEmits, listLogs, listRuns, runWorkflow, updateWorkflow, workflowKeys, type LogView } from "./api";
import { formatDuration } from "./format";
import { GateSummary } from "./GateSummary";
import { WaitingEvents } from "./WaitingEvents";
import { StatusBadge } from "./StatusBadge";
import { TriggerSummary } from "./TriggerSummary";
import type { RunView, WorkflowEmitSummaryView } from "./types";

const runColumns: Array<Column<RunView>> = [
  {
    header: "Run",
    cell: (run) => (
      <Link to="/runs/$id" params={{ id: run.id }} className="mono">
        {run.id}
      </Link>
    ),
  },
  { header: "Status", cell: (run) => <StatusBadge status={run.status} /> },
  { header: "Started", cell: (run) => <RelativeTime value={run.started_at_ms} /> },
  { header: "Duration", cell: (run) => formatDuration(run.duration_ms), className: "narrow" },
  { header: "What happened", cell: (run) => (run.error ? `${run.error.name || run.error.code}: ${run.error.msg}` : run.exit_reason ? `Exited: ${run.exit_reason}` : <span className="muted">–</span>) },
];

const logColumns: Array<Column<LogView>> = [
  { header: "When", cell: (log) => <RelativeTime value={log.ts} /> },
  { header: "Stream", cell: (log) => log.stream, className: "narrow" },
  { header: "Text", cell: (log) => <span className="log-text">{log.text}</span> },
];

const workflowRoute = getRouteApi("/app/workflows/$id");

const emitColumns: Array<Column<WorkflowEmitSummaryView>> = [
  { header: "When", cell: (emit) => <RelativeTime value={emit.indexed_at_ms} /> },
  { header: "Channel", cell: (emit) => emit.metadata.name || <span className="muted">default</span>, className: "narrow" },
  { header: "Event", cell: (emit) => (emit.event ? <JsonTree value={emit.event.raw_event} label={`Emitted event ${emit.id}`} defaultExpandedDepth={0} /> : <span className="muted">–</span>) },
];

/** /workflows/<id>: the workflow's trigger, its runs and logs; run now, pause or activate, delete. */
export function WorkflowPage() {
  const { id } = workflowRoute.useParams();
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  // A gated workflow's waiting line changes as runs end: read again while it has one.
  const workflow = useQuery({ queryKey: workflowKeys.one(id), queryFn: ({ signal }) => getWorkflow(id, signal), refetchInterval: (query) => (query.state.data?.gate ? 2_000 : false) });
  const toggle = useMutation({
    mutationFn: (active: boolean) => updateWorkflow(id, { active }),
    onSuccess: (written) => {
      queryClient.setQueryData(workflowKeys.one(id), written.data);
      void queryClient.invalidateQueries({ queryKey: workflowKeys.list });
    },
  });
  const remove = useMutation({
    mutationFn: () => deleteWorkflow(id),
    onSuccess: async () => {
      queryClient.removeQueries({ queryKey: workflowKeys.one(id) });
      void queryClient.invalidateQueries({ queryKey: workflowKeys.list });
      setConfirming(false);
      await navigate({ to: "/workflows" });
    },
  });
  const runNow = useMutation({
    mutationFn: () => runWorkflow(id, {}),
    onSuccess: async (result) => {
      void queryClient.invalidateQueries({ queryKey: workflowKeys.runs(id) });
      await navigate({ to: "/runs/$id", params: { id: "run" in result ? result.run.id : result.runId } });
    },
  });

  if (workflow.isPending) return <Loading label="Loading the workflow…" />;
  if (workflow.isError) {
    return (
      <section aria-labelledby="workflow-title">
        <h1 id="workflow-title">Workflow</h1>
        <ErrorMessage error={workflow.error} title="Could not load the workflow." />
        <Link to="/workflows">Back to workflows</Link>
      </section>
    );
  }
  const data = workflow.data;

  return (
    <section aria-labelledby="workflow-title">
      <p className="breadcrumb">
        <Link to="/workflows">Workflows</Link> /
      </p>
      <div className="page-header">
        <h1 id="workflow-title">{data.name}</h1>
        <div className="actions">
          <Link to="/workflows/$id/edit" params={{ id }} className="button primary">
            Edit
          </Link>
          <PendingButton pending={runNow.isPending} pendingText="Running…" disabled={!data.active} onClick={() => runNow.mutate()}>
            Run now
          </PendingButton>
          <PendingButton pending={toggle.isPending} pendingText={data.active ? "Pausing…" : "Activating…"} onClick={() => toggle.mutate(!data.active)}>
            {data.active ? "Pause" : "Activate"}
          </PendingButton>
          <button type="button" className="danger" onClick={() => setConfirming(true)}>
            Delete
          </button>
        </div>
      </div>
      <ErrorMessage error={toggle.error} title={data.active ? "Could not pause the workflow." : "Could not activate the workflow."} />
      <ErrorMessage error={runNow.error} title="The run did not start." />
      <dl className="facts">
        <div>
          <dt>Trigger</dt>
          <dd>
            <TriggerSummary workflow={data} />
          </dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>{data.active ? "Active" : "Paused: its trigger's events are not run"}</dd>
        </div>
        {data.gate ? (
          <div>
            <dt>Waiting</dt>
            <dd>
              <GateSummary gate={data.gate} settings={data.settings} now={workflow.dataUpdatedAt} />
              <WaitingEvents workflowId={data.id} waiting={data.gate.waiting} />
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Steps</dt>
          <dd>{data.steps.length === 0 ? "none" : data.steps.map((step) => step.name).join(" → ")}</dd>
        </div>
        <div>
          <dt>Id</dt>
          <dd className="mono">{data.id}</dd>
        </div>
      </dl>

      <h2>Runs</h2>
      <PagedTable
        queryKey={workflowKeys.runs(id)}
        fetchPage={(params, signal) => listRuns(id, params, signal)}
        columns={runColumns}
        rowKey={(run) => run.id}
        caption="Runs"
        refetchInterval={5_000}
        empty={<EmptyState title="No runs yet.">{data.trigger.endpoint_url ? <p>Send a request to the endpoint above, or use Run now.</p> : <p>Runs appear here when the trigger fires, or use Run now.</p>}</EmptyState>}
      />

      <h2>Emitted events</h2>
      <PagedTable
        queryKey={workflowKeys.emits(id)}
        fetchPage={(params, signal) => listEmits(id, params, signal)}
        columns={emitColumns}
        rowKey={(emit) => emit.id}
        caption="Emitted events"
        empty={<EmptyState title="Nothing emitted yet.">{<p>Events a step sends with $.send.emit appear here.</p>}</EmptyState>}
      />

      <h2>Logs</h2>
      <PagedTable
        queryKey={workflowKeys.logs(id)}
        fetchPage={(params, signal) => listLogs(id, params, signal)}
        columns={logColumns}
        rowKey={(log) => log.id}
        caption="Logs"
        empty={<EmptyState title="No logs yet.">{<p>What the workflow's $.send calls did appears here.</p>}</EmptyState>}
      />

      <ConfirmDialog
        open={confirming}
        title={`Delete ${data.name}?`}
        confirmLabel="Delete workflow"
        pendingLabel="Deleting…"
        danger
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => remove.mutate()}
        onCancel={() => {
          remove.reset();
          setConfirming(false);
        }}
      >
        <p>Its trigger, runs, errors and events go with it. This cannot be undone.</p>
      </ConfirmDialog>
    </section>
  );
}
