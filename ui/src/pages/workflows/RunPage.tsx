import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link } from "@tanstack/react-router";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { getRun, workflowKeys } from "./api";
import { RunDetails } from "./RunDetails";

const runRoute = getRouteApi("/app/runs/$id");

/** /runs/<id>: one run in full. */
export function RunPage() {
  const { id } = runRoute.useParams();
  const run = useQuery({ queryKey: workflowKeys.run(id), queryFn: ({ signal }) => getRun(id, signal), staleTime: 60_000 });
  if (run.isPending) return <Loading label="Loading the run…" />;
  if (run.isError) {
    return (
      <section aria-labelledby="run-title">
        <h1 id="run-title">Run</h1>
        <ErrorMessage error={run.error} title="Could not load the run." />
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
