import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import type { ErrorSummaryView, WorkflowView } from "../../api/console-types";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { JsonTree } from "../../components/JsonTree";
import { Loading } from "../../components/Loading";
import { PagedTable } from "../../components/PagedTable";
import { PendingButton } from "../../components/PendingButton";
import { RelativeTime } from "../../components/RelativeTime";
import { ErrorSettingsForm } from "./ErrorSettingsForm";
import { errorKeys, fetchErrors, fetchWorkflow, replayMany, replayOne, TODAYS_REPLAY, type ReplayChoice } from "./errors-api";
import { ReplayOptions } from "./ReplayOptions";
import { ReplayRuns } from "./ReplayRuns";
import "./errors.css";

/** One workflow's `$errors`: inspect each error's event, replay one, the selected ones, or all. */
export function WorkflowErrorsPage({ workflowId }: { workflowId: string }) {
  const workflow = useQuery({ queryKey: errorKeys.workflow(workflowId), queryFn: ({ signal }) => fetchWorkflow(workflowId, signal) });
  if (workflow.isPending) return <Loading label="Loading the workflow…" />;
  if (workflow.isError) {
    return (
      <section aria-labelledby="workflow-errors-title">
        <h1 id="workflow-errors-title">Errors</h1>
        <ErrorMessage error={workflow.error} title="Could not load this workflow." />
        <Link to="/errors">Back to all errors</Link>
      </section>
    );
  }
  return <WorkflowErrors workflow={workflow.data} />;
}

function WorkflowErrors({ workflow }: { workflow: WorkflowView }) {
  const queryClient = useQueryClient();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [shown, setShown] = useState<ErrorSummaryView | null>(null);
  const [confirmAll, setConfirmAll] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [choice, setChoice] = useState<ReplayChoice>(TODAYS_REPLAY);
  const [notReplayed, setNotReplayed] = useState<Array<{ error_id: string; reason: string }>>([]);
  const stepName = (cellId: string | undefined) => workflow.steps.find((step) => step.id === cellId)?.name ?? cellId ?? "?";

  const afterReplay = (count: number, refused: Array<{ error_id: string; reason: string }> = []) => {
    const started = count === 0 ? "No replay started." : count === 1 ? "Replay started: its run appears under Replays below." : `${count} replays started: their runs appear under Replays below.`;
    setNotice(refused.length > 0 ? `${started} ${refused.length === 1 ? "1 error was" : `${refused.length} errors were`} not replayed (why below).` : started);
    setNotReplayed(refused);
    void queryClient.invalidateQueries({ queryKey: errorKeys.runs(workflow.id) });
  };
  const one = useMutation({
    mutationFn: (eventId: string) => replayOne(workflow.id, eventId, choice),
    onMutate: () => setNotReplayed([]),
    onSuccess: () => afterReplay(1),
  });
  const many = useMutation({
    mutationFn: (eventIds: string[] | undefined) => replayMany(workflow.id, eventIds, choice),
    onSuccess: (result) => {
      setSelected(new Set());
      setConfirmAll(false);
      afterReplay(result.count, result.not_replayed);
    },
  });
  const replayError = one.error ?? many.error;

  const toggle = (id: string, on: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });

  return (
    <section aria-labelledby="workflow-errors-title">
      <p className="breadcrumb">
        <Link to="/errors">Errors</Link> /
      </p>
      <h1 id="workflow-errors-title">Errors of {workflow.name}</h1>

      <ReplayOptions choice={choice} onChange={setChoice} />
      <div className="replay-bar" role="group" aria-label="Replay">
        <PendingButton
          pending={many.isPending && many.variables !== undefined}
          pendingText="Replaying…"
          disabled={selected.size === 0 || many.isPending}
          onClick={() => many.mutate([...selected])}
        >
          Replay selected ({selected.size})
        </PendingButton>
        <button type="button" disabled={many.isPending} onClick={() => setConfirmAll(true)}>
          Replay all
        </button>
      </div>
      {replayError ? <ErrorMessage error={replayError} title="Could not replay." /> : null}
      <p role="status" className="replay-notice">
        {notice}
      </p>
      {notReplayed.length > 0 ? (
        <ul className="not-replayed" aria-label="Not replayed">
          {notReplayed.map((item) => (
            <li key={item.error_id}>
              <code>{item.error_id}</code>: {item.reason}
            </li>
          ))}
        </ul>
      ) : null}

      <PagedTable<ErrorSummaryView>
        queryKey={errorKeys.errors(workflow.id)}
        fetchPage={(params, signal) => fetchErrors(workflow.id, params, signal)}
        caption="Errors of this workflow"
        rowKey={(error) => error.id}
        refetchInterval={10_000}
        empty={
          <EmptyState title="No errors.">
            When a run of this workflow fails, its error and the event it ran on appear here, ready to replay.
          </EmptyState>
        }
        columns={[
          {
            header: "Select",
            className: "narrow",
            cell: (error) => (
              <input type="checkbox" className="row-check" aria-label={`Select error ${error.id}`} checked={selected.has(error.id)} onChange={(event) => toggle(error.id, event.target.checked)} />
            ),
          },
          { header: "When", cell: (error) => <RelativeTime value={error.indexed_at_ms} /> },
          { header: "Step", cell: (error) => <code>{stepName(error.event?.error.cellId)}</code> },
          {
            header: "Error",
            cell: (error) => (
              <span className="error-text">
                {error.event ? (
                  <>
                    <strong>{error.event.error.code}</strong>: {error.event.error.msg}
                  </>
                ) : (
                  <span className="muted">(no event kept)</span>
                )}
              </span>
            ),
          },
          {
            header: "Actions",
            className: "actions",
            cell: (error) => (
              <div className="row-actions">
                <button type="button" aria-pressed={shown?.id === error.id} onClick={() => setShown(shown?.id === error.id ? null : error)}>
                  {shown?.id === error.id ? "Hide event" : "Show event"}
                </button>
                <PendingButton pending={one.isPending && one.variables === error.id} pendingText="Replaying…" disabled={one.isPending} onClick={() => one.mutate(error.id)}>
                  Replay
                </PendingButton>
              </div>
            ),
          },
        ]}
      />

      {shown ? (
        <section aria-labelledby="shown-error-title" className="card error-detail">
          <h2 id="shown-error-title">Error {shown.id}</h2>
          {shown.event ? (
            <>
              <pre className="stack">{shown.event.error.stack || `${shown.event.error.code}: ${shown.event.error.msg}`}</pre>
              <JsonTree value={shown.event} label={`Error event ${shown.id}`} defaultExpandedDepth={2} />
            </>
          ) : (
            <p className="muted">The event of this error is no longer kept.</p>
          )}
          <button type="button" onClick={() => setShown(null)}>
            Close
          </button>
        </section>
      ) : null}

      <ReplayRuns workflowId={workflow.id} />
      <ErrorSettingsForm workflow={workflow} />

      <ConfirmDialog
        open={confirmAll}
        title="Replay every error?"
        confirmLabel="Replay all"
        pendingLabel="Replaying…"
        pending={many.isPending}
        error={many.error}
        onConfirm={() => many.mutate(undefined)}
        onCancel={() => setConfirmAll(false)}
      >
        <p>
          Each listed error of {workflow.name} runs the workflow again on its original event
          {choice.from === "failed_step" ? ", starting at the step that failed" : ""}
          {choice.with_code === "failed_run" ? ", with the code its failed run ran" : ""}.
        </p>
      </ConfirmDialog>
    </section>
  );
}
