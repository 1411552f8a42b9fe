import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { fieldError } from "../../api/client";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { PendingButton } from "../../components/PendingButton";
import { createSubscription, subscriptionsKey, type Emitters } from "./subscriptions-api";

/** Subscribe a listener to an emitter's channel: POST /v1/subscriptions. */
export function SubscriptionForm({ emitters }: { emitters: Emitters }) {
  const queryClient = useQueryClient();
  const [emitter, setEmitter] = useState("");
  const [channel, setChannel] = useState("");
  const [listener, setListener] = useState("");
  const create = useMutation({
    mutationFn: () => createSubscription({ emitter_id: emitter, listener_id: listener, event_name: channel.trim() }),
    onSuccess: () => {
      setEmitter("");
      setChannel("");
      setListener("");
      void queryClient.invalidateQueries({ queryKey: subscriptionsKey });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const emitterError = fieldError(create.error, "emitter_id");
  const listenerError = fieldError(create.error, "listener_id");
  const channelError = fieldError(create.error, "event_name");

  return (
    <form onSubmit={submit} className="subscription-form card" aria-labelledby="new-subscription-title">
      <h2 id="new-subscription-title">New subscription</h2>
      <div className="form-row">
        <FormField label="Emitter" description="Whose events: a workflow, a source, or all of them." error={emitterError} required>
          {(ids) => (
            <select id={ids.id} aria-describedby={ids.describedBy} aria-invalid={ids.invalid} required value={emitter} onChange={(event) => setEmitter(event.target.value)}>
              <option value="">Choose…</option>
              <optgroup label="All">
                <option value="p_*">Every workflow (p_*)</option>
                <option value="dc_*">Every source (dc_*)</option>
              </optgroup>
              <EmitterOptions emitters={emitters} />
            </select>
          )}
        </FormField>
        <FormField label="Channel" description="$errors for its errors, $logs, a name it emits on, or empty for its default channel." error={channelError}>
          {(ids) => (
            <>
              <input id={ids.id} list="channel-names" aria-describedby={ids.describedBy} aria-invalid={ids.invalid} value={channel} onChange={(event) => setChannel(event.target.value)} />
              <datalist id="channel-names">
                <option value="$errors" />
                <option value="$logs" />
              </datalist>
            </>
          )}
        </FormField>
        <FormField label="Listener" description="Who gets each event: a workflow runs on it; a source's run gets it." error={listenerError} required>
          {(ids) => (
            <select id={ids.id} aria-describedby={ids.describedBy} aria-invalid={ids.invalid} required value={listener} onChange={(event) => setListener(event.target.value)}>
              <option value="">Choose…</option>
              <EmitterOptions emitters={emitters} />
            </select>
          )}
        </FormField>
      </div>
      {create.isError && !emitterError && !listenerError && !channelError ? <ErrorMessage error={create.error} title="Could not subscribe." /> : null}
      {create.isSuccess ? <p role="status">Subscribed.</p> : null}
      <PendingButton type="submit" className="primary" pending={create.isPending} pendingText="Subscribing…">
        Subscribe
      </PendingButton>
    </form>
  );
}

function EmitterOptions({ emitters }: { emitters: Emitters }) {
  return (
    <>
      {emitters.workflows.length > 0 ? (
        <optgroup label="Workflows">
          {emitters.workflows.map((workflow) => (
            <option key={workflow.id} value={workflow.id}>
              {workflow.name} ({workflow.id})
            </option>
          ))}
        </optgroup>
      ) : null}
      {emitters.sources.length > 0 ? (
        <optgroup label="Sources">
          {emitters.sources.map((source) => (
            <option key={source.id} value={source.id}>
              {source.name} ({source.id})
            </option>
          ))}
        </optgroup>
      ) : null}
    </>
  );
}
