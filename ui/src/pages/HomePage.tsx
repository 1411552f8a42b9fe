import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { meQuery } from "../auth/session";

/** The landing page after sign-in; the activity overview (charts) grows here. */
export function HomePage() {
  const me = useQuery(meQuery);
  return (
    <section aria-labelledby="home-title">
      <h1 id="home-title">Home</h1>
      <p>Signed in as {me.data?.username ?? "…"}.</p>
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
