import { useMutation } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { ApiError } from "../../api/client";
import { queryClient } from "../../api/query-client";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { PendingButton } from "../../components/PendingButton";
import { runWorkflow, workflowKeys } from "./api";
import { RunDetails } from "./RunDetails";

const SAMPLE_EVENT = `{
  "method": "POST",
  "path": "/",
  "headers": { "content-type": "application/json" },
  "body": { "hello": "world" }
}
`;

/**
 * A test run of the saved workflow with a sample event (POST
 * /v1/workflows/<id>/runs?wait=true), and the run it made, shown in full.
 */
export function TestRunPanel({ workflowId, disabledReason }: { workflowId: string | null; disabledReason: string | null }) {
  const [eventText, setEventText] = useState(SAMPLE_EVENT);
  const [jsonError, setJsonError] = useState<string | null>(null);
  const run = useMutation({
    mutationFn: (event: unknown) => runWorkflow(workflowId ?? "", event),
    onSuccess: () => {
      if (workflowId) void queryClient.invalidateQueries({ queryKey: workflowKeys.runs(workflowId) });
    },
  });

  const start = () => {
    let event: unknown;
    try {
      event = JSON.parse(eventText);
    } catch (error) {
      setJsonError(`The sample event is not valid JSON: ${(error as Error).message}`);
      return;
    }
    setJsonError(null);
    run.mutate(event);
  };

  const result = run.data;
  return (
    <section className="test-run card" aria-labelledby="test-run-title">
      <h2 id="test-run-title">Test run</h2>
      <p className="muted">Runs the saved workflow once on a sample event, whatever its trigger, and shows what each step did.</p>
      <FormField label="Sample event (JSON)" error={jsonError}>
        {(f) => <textarea id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} className="json-input" rows={8} spellCheck={false} value={eventText} onChange={(event) => setEventText(event.target.value)} />}
      </FormField>
      {disabledReason ? <p className="muted">{disabledReason}</p> : null}
      <PendingButton className="primary" pending={run.isPending} pendingText="Running…" disabled={workflowId === null || disabledReason !== null} onClick={start}>
        Run with this event
      </PendingButton>
      {run.isError ? <ErrorMessage error={run.error} title={notThereYet(run.error) ? "This server cannot make test runs yet (it has no POST /v1/workflows/<id>/runs)." : "The test run did not start."} /> : null}
      {result && "runId" in result ? (
        <p>
          The run is taking longer than 30 s.{" "}
          <Link to="/runs/$id" params={{ id: result.runId }}>
            Open the run
          </Link>{" "}
          to see it when it ends.
        </p>
      ) : null}
      {result && "run" in result ? (
        <div className="test-run-result" aria-live="polite">
          <p>
            <Link to="/runs/$id" params={{ id: result.run.id }}>
              Open this run on its own page
            </Link>
          </p>
          <RunDetails run={result.run} headingLevel={3} />
        </div>
      ) : null}
    </section>
  );
}

function notThereYet(error: unknown): boolean {
  // The API's answer for a route it does not have (src/api/app.ts), as opposed to a workflow it does not find.
  return error instanceof ApiError && error.status === 404 && /^There is no route /.test(error.message);
}
