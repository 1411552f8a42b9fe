import { useQuery } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import { useServerEvents, type SseMessage } from "../../api/sse";
import { useFrameBatch } from "../../hooks/useFrameBatch";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { recentLogs, sourceKeys, type LogView } from "./api";

/** What the source's code printed, and its errors with their stacks; newest first, live. */
export function SourceLogs({ sourceId }: { sourceId: string }) {
  const query = useQuery({ queryKey: sourceKeys.logs(sourceId), queryFn: ({ signal }) => recentLogs(sourceId, signal) });
  const [live, setLive] = useState<LogView[]>([]);
  const addLive = useFrameBatch<LogView>((arrived) => setLive((current) => [...arrived.reverse(), ...current].slice(0, 500)));
  const onMessage = useCallback(
    (message: SseMessage) => {
      if (message.event !== "log") return;
      try {
        addLive(JSON.parse(message.data) as LogView);
      } catch {
        // Not a log line: ignored.
      }
    },
    [addLive],
  );
  const stream = useServerEvents(`/v1/sources/${encodeURIComponent(sourceId)}/logs/sse`, onMessage);

  const logs = useMemo(() => {
    const seen = new Set<string>();
    return [...live, ...(query.data?.data ?? [])].filter((log) => !seen.has(log.id) && seen.add(log.id)).sort((a, b) => b.ts - a.ts);
  }, [live, query.data]);

  if (query.isPending) return <Loading label="Loading logs…" />;
  if (query.isError) return <ErrorMessage error={query.error} title="Could not load the logs." />;
  return (
    <div>
      <p className="muted stream-state" aria-live="polite">
        {stream === "open" ? "Live." : stream === "closed" ? "Not live: the stream ended." : "Connecting…"}
      </p>
      {logs.length === 0 ? (
        <EmptyState title="No logs yet">What the source prints (console.log) and its errors show here.</EmptyState>
      ) : (
        <ol className="log-list" aria-label="Logs, newest first">
          {logs.map((log) => (
            <li key={log.id} className={log.stream === "stderr" || log.stream === "error" ? "log-line log-error" : "log-line"}>
              <time dateTime={new Date(log.ts).toISOString()}>{new Date(log.ts).toLocaleTimeString()}</time>
              <span className="log-stream">{log.stream}</span>
              <pre className="log-text">{log.text}</pre>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
