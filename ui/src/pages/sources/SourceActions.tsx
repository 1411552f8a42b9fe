import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorMessage } from "../../components/ErrorMessage";
import { PendingButton } from "../../components/PendingButton";
import { deleteSource, runSource, sourceKeys, updateSource, type RunResultView, type SourceListItem } from "./api";

/** Run now, activate / deactivate, delete (confirmed). */
export function SourceActions({ source }: { source: SourceListItem }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  const ownedBy = source.owned_by_workflow;

  const run = useMutation({
    mutationFn: () => runSource(source.id),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: sourceKeys.logs(source.id) }),
  });
  const toggle = useMutation({
    mutationFn: () => updateSource(source.id, { active: !source.active }),
    onSuccess: (updated) => {
      queryClient.setQueryData(sourceKeys.one(source.id), updated);
      void queryClient.invalidateQueries({ queryKey: sourceKeys.list() });
    },
  });
  const remove = useMutation({
    mutationFn: () => deleteSource(source.id),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: sourceKeys.one(source.id) });
      void queryClient.invalidateQueries({ queryKey: sourceKeys.list() });
      void navigate({ to: "/sources" });
    },
  });

  return (
    <div className="source-actions">
      <div className="button-row">
        <PendingButton className="primary" pending={run.isPending} pendingText="Running…" onClick={() => run.mutate()}>
          Run now
        </PendingButton>
        <PendingButton pending={toggle.isPending} pendingText={source.active ? "Deactivating…" : "Activating…"} disabled={ownedBy !== null} onClick={() => toggle.mutate()}>
          {source.active ? "Deactivate" : "Activate"}
        </PendingButton>
        <button type="button" className="danger" disabled={ownedBy !== null} onClick={() => setConfirming(true)}>
          Delete
        </button>
      </div>
      {ownedBy ? (
        <p className="muted">
          This source is the trigger of the workflow {ownedBy.name}: it is activated, changed and deleted with that workflow.
        </p>
      ) : null}
      {run.data ? <RunResult result={run.data} /> : null}
      <ErrorMessage error={run.error} title="Run now failed." />
      <ErrorMessage error={toggle.error} />
      <ConfirmDialog
        open={confirming}
        title={`Delete ${source.name}?`}
        confirmLabel="Delete source"
        pendingLabel="Deleting…"
        danger
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => remove.mutate()}
        onCancel={() => {
          setConfirming(false);
          remove.reset();
        }}
      >
        <p>Its endpoint stops answering and its events and logs are deleted. This cannot be undone.</p>
      </ConfirmDialog>
    </div>
  );
}

function RunResult({ result }: { result: RunResultView }) {
  if (!result.ok) {
    return (
      <div className="error-message" role="alert">
        <strong>The run failed after {Math.round(result.duration_ms)} ms: </strong>
        {result.error ? `${result.error.name}: ${result.error.message}` : "no error was reported."}
        {result.error?.stack ? <pre className="stack">{result.error.stack}</pre> : null}
      </div>
    );
  }
  const count = result.events.length;
  return (
    <p className="success-message" role="status">
      Ran in {Math.round(result.duration_ms)} ms and emitted {count} event{count === 1 ? "" : "s"}.
    </p>
  );
}
