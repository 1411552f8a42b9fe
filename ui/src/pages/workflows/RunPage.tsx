import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { getRouteApi, Link } from "@tanstack/react-router";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { getRun, workflowKeys } from "./api";
import { RunDetails } from "./RunDetails";
import { RunNotRecorded } from "./RunWait";
import { ApiError } from "../../api/client";

const runRoute = getRouteApi("/app/runs/$id");

/** /runs/<id>: one run in full. */
export function RunPage() {
  const { id } = runRoute.useParams();
  // A running run cancelled from here is recorded when its step in progress ends: looked for every second until then.
  const [cancelling, setCancelling] = useState(false);
  const run = useQuery({ queryKey: workflowKeys.run(id), queryFn: ({ signal }) => getRun(id, signal), staleTime: 60_000, refetchInterval: (query) => (cancelling && query.state.status === "error" ? 1_000 : false) });
  if (run.isPending) return <Loading label="Loading the run…" />;
  if (run.isError) {
    return (
      <section aria-labelledby="run-title">
        <h1 id="run-title">Run</h1>
        <ErrorMessage error={run.error} title="Could not load the run." />
        {run.error instanceof ApiError && run.error.status === 404 ? <RunNotRecorded runId={id} onCancelled={() => setCancelling(true)} /> : null}
        <Link to="/workflows">Back to workflows</Link>
      </section>
    );
  }
  return (
    <section aria-labelledby="run-title">
      <p className="breadcrumb">
        <Link to="/workflows">Workflows</Link> /{" "}
        <Link to="/workflows/$id" params={{ id: run.data.workflow_id }}>
          {run.data.workflow_id}
        </Link>{" "}
        /
      </p>
      <h1 id="run-title">
        Run <span className="mono">{run.data.id}</span>
      </h1>
      <RunDetails run={run.data} />
    </section>
  );
}
