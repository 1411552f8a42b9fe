import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { pageOfArray } from "../../api/array-page";
import type { SubscriptionView } from "../../api/console-types";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { PagedTable } from "../../components/PagedTable";
import { RelativeTime } from "../../components/RelativeTime";
import { SubscriptionForm } from "./SubscriptionForm";
import { deleteSubscription, fetchSubscriptions, isErrorRouting, subscriptionsKey, useEmitters, type Emitters } from "./subscriptions-api";
import "./subscriptions.css";

/**
 * Subscriptions: which listener gets which channel of which emitter. `$errors`
 * ones are error routing and listed apart from the event subscriptions (a
 * workflow's trigger among them), as the specification shows them.
 */
export function SubscriptionsPage() {
  const emitters = useEmitters();
  const [deleting, setDeleting] = useState<SubscriptionView | null>(null);
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: (subscription: SubscriptionView) => deleteSubscription(subscription),
    onSuccess: () => {
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: subscriptionsKey });
    },
  });

  return (
    <section aria-labelledby="subscriptions-title">
      <h1 id="subscriptions-title">Subscriptions</h1>
      <p className="muted">A subscription gives a listener every event an emitter sends on one channel.</p>
      {emitters.isPending ? (
        <Loading label="Loading workflows and sources…" />
      ) : emitters.isError ? (
        <ErrorMessage error={emitters.error} title="Could not load your workflows and sources." />
      ) : (
        <>
          <SubscriptionForm emitters={emitters.data} />
          <h2>Event subscriptions</h2>
          <SubscriptionTable emitters={emitters.data} errors={false} onDelete={setDeleting} />
          <h2>Error routing</h2>
          <p className="muted">
            Listeners of an emitter's <code>$errors</code> run on each of its errors. See also <Link to="/errors">Errors</Link>.
          </p>
          <SubscriptionTable emitters={emitters.data} errors onDelete={setDeleting} />
        </>
      )}
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this subscription?"
        confirmLabel="Delete"
        pendingLabel="Deleting…"
        danger
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => deleting && remove.mutate(deleting)}
        onCancel={() => {
          setDeleting(null);
          remove.reset();
        }}
      >
        {deleting && emitters.data ? (
          <p>
            {emitters.data.nameOf(deleting.listener_id)} will no longer get {channelText(deleting.event_name)} of {emitters.data.nameOf(deleting.emitter_id)}.
          </p>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}

function channelText(channel: string): string {
  return channel === "" ? "the default channel" : channel;
}

function SubscriptionTable({ emitters, errors, onDelete }: { emitters: Emitters; errors: boolean; onDelete: (subscription: SubscriptionView) => void }) {
  const triggerOf = (subscription: SubscriptionView) => emitters.workflows.find((workflow) => workflow.id === subscription.listener_id && workflow.trigger.source_id === subscription.emitter_id);
  return (
    <PagedTable<SubscriptionView>
      queryKey={[...subscriptionsKey, errors ? "errors" : "events"]}
      fetchPage={async (params, signal) => pageOfArray((await fetchSubscriptions(signal)).filter((subscription) => isErrorRouting(subscription) === errors), params)}
      caption={errors ? "Error routing subscriptions" : "Event subscriptions"}
      rowKey={(subscription) => subscription.id}
      empty={<EmptyState title={errors ? "No error routing yet." : "No subscriptions yet."}>{errors ? "Subscribe a listener to a workflow's $errors channel above." : "Subscribe a listener to an emitter above."}</EmptyState>}
      columns={[
        { header: "Emitter", cell: (subscription) => <Named id={subscription.emitter_id} name={emitters.nameOf(subscription.emitter_id)} /> },
        { header: "Channel", cell: (subscription) => (subscription.event_name === "" ? <span className="muted">default</span> : <code>{subscription.event_name}</code>) },
        {
          header: "Listener",
          cell: (subscription) => (
            <>
              <Named id={subscription.listener_id} name={emitters.nameOf(subscription.listener_id)} />
              {triggerOf(subscription) ? <span className="badge">trigger</span> : null}
            </>
          ),
        },
        { header: "Created", cell: (subscription) => <RelativeTime value={subscription.created_at} /> },
        {
          header: "Actions",
          className: "actions",
          cell: (subscription) => (
            <button type="button" className="danger-outline" aria-label={`Delete subscription of ${emitters.nameOf(subscription.listener_id)} to ${emitters.nameOf(subscription.emitter_id)}`} onClick={() => onDelete(subscription)}>
              Delete
            </button>
          ),
        },
      ]}
    />
  );
}

function Named({ id, name }: { id: string; name: string }) {
  return name === id ? <code>{id}</code> : (
    <span>
      {name} <code className="muted">{id}</code>
    </span>
  );
}
