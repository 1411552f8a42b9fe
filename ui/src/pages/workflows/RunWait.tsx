import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { queryClient } from "../../api/query-client";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorMessage } from "../../components/ErrorMessage";
import { RelativeTime } from "../../components/RelativeTime";
import { cancelRun, workflowKeys } from "./api";
import type { RunView } from "./types";

/** Runs that wait in the queue, and so can be cancelled here (a running run is not listed: its record comes when it ends). */
const CANCELLABLE = new Set(["delayed", "retrying"]);
// Events waiting at a gate have no run yet: WaitingEvents.tsx lists them with their own Cancel.

/**
 * A delayed run ($.flow.delay / $.flow.rerun): when it resumes; a cancelled
 * one: who cancelled it and when; a waiting one (delayed or retrying): a
 * Cancel button, confirmed first.
 */
export function RunWait({ run }: { run: RunView }) {
  const [confirming, setConfirming] = useState(false);
  const cancel = useMutation({
    mutationFn: () => cancelRun(run.id),
    onSuccess: (cancelled) => {
      if ("id" in cancelled) queryClient.setQueryData(workflowKeys.run(run.id), cancelled);
      void queryClient.invalidateQueries({ queryKey: workflowKeys.run(run.id) });
      void queryClient.invalidateQueries({ queryKey: workflowKeys.runs(run.workflow_id) });
      setConfirming(false);
    },
  });
  if (run.status === "cancelled") {
    return (
      <p className="run-wait" aria-label="Cancelled">
        <strong>Cancelled</strong> <RelativeTime value={run.finished_at_ms} /> by <span className="mono">{run.cancelled_by ?? "unknown"}</span>: it will not resume, and its pending sends were dropped.
      </p>
    );
  }
  if (!CANCELLABLE.has(run.status)) return null;
  return (
    <section className="run-wait" aria-label="Waiting run">
      {run.status === "delayed" && run.next_attempt_at_ms !== null ? (
        <p>
          <strong>Delayed:</strong> the run resumes <RelativeTime value={run.next_attempt_at_ms} due /> ($.flow.delay or $.flow.rerun).
        </p>
      ) : null}
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        Cancel run
      </button>
      <ConfirmDialog
        open={confirming}
        title="Cancel this run?"
        confirmLabel="Cancel run"
        pendingLabel="Cancelling…"
        danger
        pending={cancel.isPending}
        error={cancel.error}
        onConfirm={() => cancel.mutate()}
        onCancel={() => {
          cancel.reset();
          setConfirming(false);
        }}
      >
        <p>It will not resume: its remaining steps never run and its pending sends are dropped. No error is recorded.</p>
      </ConfirmDialog>
      {cancel.error && !confirming ? <ErrorMessage error={cancel.error} title="Could not cancel the run." /> : null}
    </section>
  );
}

/**
 * A run id that is not recorded (yet): a run in progress is recorded when it
 * ends, so it may be running. Cancel asks the process running it to stop it
 * before its next step (202); the run is then recorded cancelled.
 */
export function RunNotRecorded({ runId, onCancelled }: { runId: string; onCancelled: () => void }) {
  const cancel = useMutation({
    mutationFn: () => cancelRun(runId),
    onSuccess: () => {
      onCancelled();
    },
  });
  return (
    <section className="run-wait" aria-label="Run not recorded yet">
      <p>This run is not recorded yet: it may still be queued or running (a run is recorded when it ends or waits).</p>
      {cancel.isSuccess ? (
        <p role="status">Cancelling: the run stops before its next step and is recorded cancelled.</p>
      ) : (
        <button type="button" className="danger" disabled={cancel.isPending} onClick={() => cancel.mutate()}>
          {cancel.isPending ? "Cancelling…" : "Cancel run"}
        </button>
      )}
      {cancel.error ? <ErrorMessage error={cancel.error} title="Could not cancel the run." /> : null}
    </section>
  );
}
