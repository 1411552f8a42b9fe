import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import { useServerEvents, type SseMessage } from "../../api/sse";
import { useFrameBatch } from "../../hooks/useFrameBatch";
import type { EventSummaryView } from "../../api/types";
import { CopyButton } from "../../components/CopyButton";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { JsonTree } from "../../components/JsonTree";
import { Loading } from "../../components/Loading";
import { recentEvents, sourceKeys } from "./api";

/** The inspector shows this many events, as the seed's does. */
const SHOWN = 100;

/** Event ids are `<epoch ms>-<sequence>`: newest first means by time, then sequence. */
function newestFirst(a: EventSummaryView, b: EventSummaryView): number {
  return b.indexed_at_ms - a.indexed_at_ms || sequenceOf(b.id) - sequenceOf(a.id);
}

function sequenceOf(id: string): number {
  return Number(id.slice(id.indexOf("-") + 1)) || 0;
}

/** One line for the list: the component's summary, else the start of the event. */
function summaryLine(item: EventSummaryView): string {
  if (item.metadata.summary) return item.metadata.summary;
  if (item.event === undefined) return "(event over 1 KB: open it to see it)";
  const text = JSON.stringify(item.event) ?? "undefined";
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/**
 * The most recent 100 events, newest first; new ones arrive live over the
 * source's SSE stream without a reload. A row opens the full event as a tree.
 */
export function EventInspector({ sourceId }: { sourceId: string }) {
  const queryClient = useQueryClient();
  const query = useQuery({ queryKey: sourceKeys.events(sourceId), queryFn: ({ signal }) => recentEvents(sourceId, signal) });
  const [live, setLive] = useState<EventSummaryView[]>([]);
  const [selectedId, setSelectedId] = useState<string | null>(null);

  const addLive = useFrameBatch<EventSummaryView>((arrived) => setLive((current) => [...arrived.reverse(), ...current].slice(0, SHOWN)));
  const onMessage = useCallback(
    (message: SseMessage) => {
      try {
        addLive(JSON.parse(message.data) as EventSummaryView);
      } catch {
        // Not an event summary: nothing to show.
      }
    },
    [addLive],
  );
  // After a dropped connection: load the list again, so that nothing sent meanwhile is missing.
  const onReconnect = useCallback(() => void queryClient.invalidateQueries({ queryKey: sourceKeys.events(sourceId) }), [queryClient, sourceId]);
  const stream = useServerEvents(`/v1/sources/${encodeURIComponent(sourceId)}/sse`, onMessage, onReconnect);

  const events = useMemo(() => {
    const byId = new Map<string, EventSummaryView>();
    for (const item of [...live, ...(query.data?.data ?? [])]) if (!byId.has(item.id)) byId.set(item.id, item);
    return [...byId.values()].sort(newestFirst).slice(0, SHOWN);
  }, [live, query.data]);
  const selected = events.find((item) => item.id === selectedId) ?? null;

  if (query.isPending) return <Loading label="Loading events…" />;
  if (query.isError) return <ErrorMessage error={query.error} title="Could not load the events." />;

  return (
    <div className="inspector">
      <p className="muted stream-state" aria-live="polite">
        {stream === "open" ? "Live: new events appear here as they arrive." : stream === "closed" ? "Not live: the stream ended." : "Connecting to the live stream…"}
      </p>
      {events.length === 0 ? (
        <EmptyState title="No events yet">Events appear here as the source emits them: call its endpoint, or Run now.</EmptyState>
      ) : (
        <div className="inspector-panes">
          <ol className="event-list" aria-label="Events, newest first">
            {events.map((item) => (
              <li key={item.id}>
                <button type="button" className={item.id === selectedId ? "event-row selected" : "event-row"} aria-pressed={item.id === selectedId} onClick={() => setSelectedId(item.id)}>
                  <time className="event-time" dateTime={new Date(item.indexed_at_ms).toISOString()}>
                    {new Date(item.indexed_at_ms).toLocaleTimeString()}
                  </time>
                  <span className="event-channel">{item.metadata.name || "default"}</span>
                  <span className="event-summary">{summaryLine(item)}</span>
                </button>
              </li>
            ))}
          </ol>
          <div className="event-detail" aria-live="polite">
            {selected ? <EventDetail item={selected} /> : <p className="muted">Select an event to see all of it.</p>}
          </div>
        </div>
      )}
    </div>
  );
}

function EventDetail({ item }: { item: EventSummaryView }) {
  const full = item.event !== undefined;
  const json = JSON.stringify(item.event, null, 2) ?? "";
  return (
    <div>
      <div className="event-detail-header">
        <h3>Event {item.id}</h3>
        {full ? <CopyButton value={json} label="Copy JSON" /> : null}
      </div>
      <dl className="facts">
        <dt>Channel</dt>
        <dd>{item.metadata.name || "default"}</dd>
        <dt>Emitted</dt>
        <dd>{new Date(item.indexed_at_ms).toLocaleString()}</dd>
        {item.metadata.summary ? (
          <>
            <dt>Summary</dt>
            <dd>{item.metadata.summary}</dd>
          </>
        ) : null}
      </dl>
      {full ? <JsonTree value={item.event} label={`Event ${item.id}`} defaultExpandedDepth={2} /> : <p className="muted">This event is over 1 KB and was left out of the list.</p>}
    </div>
  );
}
