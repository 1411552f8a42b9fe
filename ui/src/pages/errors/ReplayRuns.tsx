import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { RelativeTime } from "../../components/RelativeTime";
import { errorKeys, fetchRuns } from "./errors-api";

/** The workflow's recent runs that replayed an error (replay_of), so a replay's outcome is seen where it was started. */
export function ReplayRuns({ workflowId }: { workflowId: string }) {
  const runs = useQuery({
    queryKey: errorKeys.runs(workflowId),
    queryFn: ({ signal }) => fetchRuns(workflowId, { limit: 50 }, signal),
    // A replay is queued: its run is recorded a moment later.
    refetchInterval: 2_000,
  });
  // A replay that failed again left a new error: show it in the list above without waiting for its refresh.
  const queryClient = useQueryClient();
  const replayCount = runs.data?.data.filter((run) => run.replay_of !== null).length;
  useEffect(() => {
    if (replayCount !== undefined) void queryClient.invalidateQueries({ queryKey: errorKeys.errors(workflowId) });
  }, [replayCount, queryClient, workflowId]);
  return (
    <section aria-labelledby="replays-title" className="replays">
      <h2 id="replays-title">Replays</h2>
      {runs.isPending ? (
        <Loading label="Loading runs…" />
      ) : runs.isError ? (
        <ErrorMessage error={runs.error} title="Could not load the runs." />
      ) : (
        <ReplayList runs={runs.data.data.filter((run) => run.replay_of !== null)} />
      )}
    </section>
  );
}

function ReplayList({ runs }: { runs: Array<{ id: string; status: string; replay_of: string | null; started_at_ms: number; error: { msg: string } | null; steps: Array<{ reused: boolean }> }> }) {
  if (runs.length === 0) return <p className="muted">No replays among the last 50 runs.</p>;
  return (
    <ul className="replay-list">
      {runs.map((run) => (
        <li key={run.id}>
          <code>{run.id}</code> <span className={`status status-${run.status}`}>{run.status}</span>, replay of <code>{run.replay_of}</code>
          {run.steps.some((step) => step.reused) ? " from its failed step" : ""}, <RelativeTime value={run.started_at_ms} />
          {run.error ? <span className="muted"> ({run.error.msg})</span> : null}
        </li>
      ))}
    </ul>
  );
}
