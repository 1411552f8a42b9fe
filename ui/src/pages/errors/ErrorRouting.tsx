import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState, type FormEvent } from "react";
import { apiData, fieldError } from "../../api/client";
import type { UserView } from "../../api/types";
import { meQuery } from "../../auth/session";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { Loading } from "../../components/Loading";
import { PendingButton } from "../../components/PendingButton";
import { fetchSubscriptions, isErrorRouting, subscriptionsKey, useEmitters } from "../subscriptions/subscriptions-api";
import { findErrorWorkflow } from "./errors-api";

/**
 * Where errors go: the global error workflow (a listener of `p_*` / `$errors`
 * that mails a summary), any other `$errors` subscription, and the address
 * those mails go to. A workflow's own switch is on its errors page.
 */
export function ErrorRouting() {
  const errorWorkflow = useQuery({ queryKey: ["workflows", "error-workflow"], queryFn: ({ signal }) => findErrorWorkflow(signal) });
  const subscriptions = useQuery({ queryKey: subscriptionsKey, queryFn: ({ signal }) => fetchSubscriptions(signal) });
  const emitters = useEmitters();
  const nameOf = emitters.data?.nameOf ?? ((id: string) => id);

  return (
    <section aria-labelledby="routing-title" className="error-routing">
      <h2 id="routing-title">Error routing</h2>
      <h3>Global error workflow</h3>
      {errorWorkflow.isPending ? (
        <Loading label="Looking for the global error workflow…" />
      ) : errorWorkflow.isError ? (
        <ErrorMessage error={errorWorkflow.error} title="Could not load the global error workflow." />
      ) : errorWorkflow.data === null ? (
        <p className="muted">None yet: Runnel makes it with your first workflow. It gets every workflow's errors and mails you a summary of each.</p>
      ) : (
        <div className="card routing-card">
          <p>
            <Link to="/errors/$workflowId" params={{ workflowId: errorWorkflow.data.id }}>
              {errorWorkflow.data.name}
            </Link>{" "}
            gets the errors of every workflow whose error notifications are on, and runs its steps on each:
          </p>
          <ol className="step-list">
            {errorWorkflow.data.steps.map((step) => (
              <li key={step.id}>
                <code>{step.name}</code> {step.key ? <span className="muted">({step.key})</span> : <span className="muted">(code)</span>}
              </li>
            ))}
          </ol>
          <p className="muted">
            Change its steps on its <Link to="/workflows">workflow page</Link> (it cannot be deleted). To keep one workflow's errors out of it, turn that workflow's
            notifications off on its errors page.
          </p>
        </div>
      )}

      <h3>$errors subscriptions</h3>
      {subscriptions.isPending ? (
        <Loading label="Loading subscriptions…" />
      ) : subscriptions.isError ? (
        <ErrorMessage error={subscriptions.error} title="Could not load subscriptions." />
      ) : (
        <ul className="routing-list">
          {subscriptions.data.filter(isErrorRouting).map((subscription) => (
            <li key={subscription.id}>
              Errors of <strong>{nameOf(subscription.emitter_id)}</strong> go to <strong>{nameOf(subscription.listener_id)}</strong>
            </li>
          ))}
          {subscriptions.data.filter(isErrorRouting).length === 0 ? <li className="muted">None.</li> : null}
        </ul>
      )}
      <p className="muted">
        Route one workflow's errors to another listener on <Link to="/subscriptions">Subscriptions</Link> (channel <code>$errors</code>).
      </p>

      <h3>Error notices by mail</h3>
      <NoticeEmailForm />
    </section>
  );
}

/** PATCH /v1/users/me: where error notices (and $.send.email mails) go. */
function NoticeEmailForm() {
  const queryClient = useQueryClient();
  const me = useQuery(meQuery);
  const [draft, setDraft] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (email: string | null) => apiData<UserView>("PATCH", "/v1/users/me", { body: { email } }),
    onSuccess: (user) => {
      queryClient.setQueryData(meQuery.queryKey, user);
      setDraft(null);
    },
  });
  if (me.isPending) return <Loading />;
  if (me.isError) return <ErrorMessage error={me.error} />;
  const value = draft ?? me.data.email ?? "";
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(value.trim() === "" ? null : value.trim());
  };
  return (
    <form onSubmit={submit} className="inline-form">
      <FormField
        label="Send error notices to"
        description="The global error workflow mails each error here; without an address the mails stay in the outbox (Settings)."
        error={fieldError(save.error, "email")}
      >
        {(ids) => (
          <input
            id={ids.id}
            type="email"
            aria-describedby={ids.describedBy}
            aria-invalid={ids.invalid}
            value={value}
            placeholder="you@example.com"
            onChange={(event) => setDraft(event.target.value)}
          />
        )}
      </FormField>
      {save.isError && !fieldError(save.error, "email") ? <ErrorMessage error={save.error} title="Could not save the address." /> : null}
      {save.isSuccess ? <p role="status">Saved.</p> : null}
      <PendingButton type="submit" pending={save.isPending} pendingText="Saving…">
        Save address
      </PendingButton>
    </form>
  );
}
