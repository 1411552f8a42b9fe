import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { meQuery } from "../auth/session";
import { EmptyState } from "../components/EmptyState";
import { ErrorMessage } from "../components/ErrorMessage";
import { Loading } from "../components/Loading";
import { RelativeTime } from "../components/RelativeTime";
import { ActivityChart } from "./home/ActivityChart";
import { activityQuery, isActivityMissing, totalsOf } from "./home/activity";
import "./home/home.css";

/** What is happening at a glance: the last hour's runs, events and errors, failing workflows first. */
export function HomePage() {
  const me = useQuery(meQuery);
  return (
    <section aria-labelledby="home-title">
      <h1 id="home-title">Home</h1>
      <p>Signed in as {me.data?.username ?? "…"}.</p>
      <Activity />
      <h2>Where to go</h2>
      <ul className="link-list">
        <li>
          <Link to="/sources">Sources</Link>: what turns HTTP requests and timers into events.
        </li>
        <li>
          <Link to="/workflows">Workflows</Link>: the steps that run on those events.
        </li>
        <li>
          <Link to="/errors">Errors</Link>: failed runs, to inspect and replay.
        </li>
      </ul>
    </section>
  );
}

function Activity() {
  const activity = useQuery(activityQuery);
  if (activity.isPending) return <Loading label="Loading the last hour…" />;
  if (activity.isError) {
    if (isActivityMissing(activity.error)) {
      return (
        <EmptyState title="Activity is not available on this server.">
          This server's API has no <code>/v1/users/me/activity</code> yet; update Runnel to see the last hour here. Meanwhile, <Link to="/errors">Errors</Link> lists each workflow's failures.
        </EmptyState>
      );
    }
    return (
      <div>
        <ErrorMessage error={activity.error} title="Could not load the last hour." />
        <button type="button" onClick={() => void activity.refetch()}>
          Try again
        </button>
      </div>
    );
  }

  const { buckets, failing_workflows: failing } = activity.data;
  const totals = totalsOf(activity.data);
  return (
    <>
      <section aria-labelledby="failing-title" className="home-block">
        <h2 id="failing-title">Failing workflows</h2>
        {failing.length === 0 ? (
          <p className="ok-line">No workflow failed in the last hour.</p>
        ) : (
          <ul className="failing-list">
            {failing.map((workflow) => (
              <li key={workflow.id}>
                <Link to="/errors/$workflowId" params={{ workflowId: workflow.id }}>
                  {workflow.name}
                </Link>{" "}
                <span className="error-count">
                  {workflow.errors} {workflow.errors === 1 ? "error" : "errors"}
                </span>
                , last <RelativeTime value={workflow.last_error_at} />
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="hour-title" className="home-block">
        <h2 id="hour-title">The last hour</h2>
        <dl className="totals">
          <div>
            <dt>Runs</dt>
            <dd>{totals.runs}</dd>
          </div>
          <div>
            <dt>Events</dt>
            <dd>{totals.events}</dd>
          </div>
          <div>
            <dt>Errors</dt>
            <dd className={totals.errors > 0 ? "has-errors" : undefined}>{totals.errors}</dd>
          </div>
        </dl>
        {totals.runs + totals.events === 0 ? (
          <EmptyState title="Nothing happened in the last hour.">
            Events appear when a <Link to="/sources">source</Link> receives a request or a timer ticks; runs when a <Link to="/workflows">workflow</Link> gets them.
          </EmptyState>
        ) : (
          <ActivityChart buckets={buckets} />
        )}
      </section>
    </>
  );
}
