import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { queryClient } from "../../api/query-client";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorMessage } from "../../components/ErrorMessage";
import { RelativeTime } from "../../components/RelativeTime";
import { cancelWaiting, listWaiting, workflowKeys } from "./api";
import type { WaitingEventView } from "./types";

/** How many waiting events the workflow page lists; the others are counted ("and N more"). */
const SHOWN = 20;

/**
 * The events waiting at a gated workflow's gate, in line order (the first
 * 20), each with a Cancel button, confirmed first: a cancelled event leaves
 * its line for good and never runs. Read again with the workflow (every 2 s
 * while it has a gate).
 */
export function WaitingEvents({ workflowId, waiting }: { workflowId: string; waiting: number }) {
  const [confirming, setConfirming] = useState<WaitingEventView | null>(null);
  // The count in the key: the list follows the gate summary as the line moves.
  const list = useQuery({
    queryKey: [...workflowKeys.waiting(workflowId), waiting],
    queryFn: ({ signal }) => listWaiting(workflowId, { limit: SHOWN }, signal),
    enabled: waiting > 0,
    // The last list stays shown while the next loads: no flicker as the line moves.
    placeholderData: (previous) => previous,
  });
  const cancel = useMutation({
    mutationFn: (eventId: string) => cancelWaiting(workflowId, eventId),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: workflowKeys.waiting(workflowId) });
      void queryClient.invalidateQueries({ queryKey: workflowKeys.one(workflowId) });
      void queryClient.invalidateQueries({ queryKey: workflowKeys.runs(workflowId) });
      setConfirming(null);
    },
  });
  if (waiting === 0 || !list.data) return list.error ? <ErrorMessage error={list.error} title="Could not list the waiting events." /> : null;
  const items = list.data.data;
  const more = list.data.page_info.total_count - items.length;
  return (
    <div className="waiting-events">
      <ol aria-label="Waiting events">
        {items.map((item) => (
          <li key={item.event_id}>
            <span className="waiting-position">#{item.position}</span> <span className="mono">{item.event_id}</span>
            {item.key !== null ? <span className="muted"> key {JSON.stringify(item.key)}</span> : null}
            <span className="muted">
              {" "}
              arrived <RelativeTime value={item.waiting_since_ms} />
            </span>{" "}
            <button type="button" className="danger" aria-label={`Cancel waiting event ${item.event_id}`} onClick={() => setConfirming(item)}>
              Cancel
            </button>
          </li>
        ))}
      </ol>
      {more > 0 ? <p className="muted">and {more} more</p> : null}
      <ConfirmDialog
        open={confirming !== null}
        title="Cancel this waiting event?"
        confirmLabel="Cancel event"
        pendingLabel="Cancelling…"
        danger
        pending={cancel.isPending}
        error={cancel.error}
        onConfirm={() => confirming && cancel.mutate(confirming.event_id)}
        onCancel={() => {
          cancel.reset();
          setConfirming(null);
        }}
      >
        <p>
          <span className="mono">{confirming?.event_id}</span> leaves its line and never runs; its run is recorded cancelled. The events behind it move up.
        </p>
      </ConfirmDialog>
    </div>
  );
}
