import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { fieldError } from "../../api/client";
import type { WorkflowView } from "../../api/console-types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { PendingButton } from "../../components/PendingButton";
import { errorKeys, updateErrorSettings } from "./errors-api";

/** A workflow's error settings: whether its errors reach the global error workflow, and how many are kept. */
export function ErrorSettingsForm({ workflow }: { workflow: WorkflowView }) {
  const queryClient = useQueryClient();
  const [notify, setNotify] = useState(workflow.settings.error_notifications);
  const [retention, setRetention] = useState(String(workflow.settings.error_retention));
  const save = useMutation({
    mutationFn: () => updateErrorSettings(workflow.id, { error_notifications: notify, error_retention: Number(retention) }),
    onSuccess: (updated) => {
      queryClient.setQueryData(errorKeys.workflow(workflow.id), updated);
      void queryClient.invalidateQueries({ queryKey: errorKeys.workflows });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const retentionError = fieldError(save.error, "settings.error_retention");
  return (
    <section aria-labelledby="error-settings-title" className="error-settings">
      <h2 id="error-settings-title">Error settings</h2>
      <form onSubmit={submit}>
        <div className="check-field">
          <input id="error-notifications" type="checkbox" checked={notify} disabled={workflow.is_error_workflow} onChange={(event) => setNotify(event.target.checked)} />
          <label htmlFor="error-notifications">Send this workflow's errors to the global error workflow</label>
        </div>
        {workflow.is_error_workflow ? <p className="muted">This is the global error workflow: its own errors are listed here and sent nowhere.</p> : null}
        <FormField label="Errors kept" description="How many of the newest errors $errors keeps (older ones go)." error={retentionError}>
          {(ids) => (
            <input
              id={ids.id}
              type="number"
              min={1}
              inputMode="numeric"
              aria-describedby={ids.describedBy}
              aria-invalid={ids.invalid}
              value={retention}
              onChange={(event) => setRetention(event.target.value)}
            />
          )}
        </FormField>
        {save.isError && !retentionError ? <ErrorMessage error={save.error} title="Could not save the settings." /> : null}
        {save.isSuccess ? <p role="status">Saved.</p> : null}
        <PendingButton type="submit" pending={save.isPending} pendingText="Saving…">
          Save settings
        </PendingButton>
      </form>
    </section>
  );
}
