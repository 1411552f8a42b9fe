import { useQuery } from "@tanstack/react-query";
import { api } from "../../api/client";
import type { StatusView } from "../../api/console-types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { RelativeTime } from "../../components/RelativeTime";

/** How long a wait reads for a person: "0 s", "42 s", "3 min", "2 h". */
function waitText(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

/**
 * The installation (admins only): its processes, their role, version and
 * load, whether each still beats, and the runs waiting; the same as
 * `runnel status`. Refreshed every few seconds, since it is watched.
 */
export function InstallationSection() {
  const status = useQuery({ queryKey: ["status"], queryFn: ({ signal }) => api<StatusView>("GET", "/v1/status", { signal }), refetchInterval: 5_000 });
  return (
    <section aria-labelledby="installation-title" className="settings-section">
      <h2 id="installation-title">Installation</h2>
      {status.isPending ? (
        <Loading label="Loading the installation's status…" />
      ) : status.isError ? (
        <ErrorMessage error={status.error} title="Could not load the installation's status." />
      ) : (
        <InstallationStatus status={status.data} />
      )}
    </section>
  );
}

function InstallationStatus({ status }: { status: StatusView }) {
  const lost = status.processes.filter((process) => process.state === "lost");
  const { waiting, running, oldest_wait_ms: oldestWait } = status.queues.deliveries;
  return (
    <>
      {lost.length > 0 ? (
        <p role="alert" className="error-message">
          {lost.length === 1 ? "One process has" : `${lost.length} processes have`} stopped beating: killed, frozen or cut off from the database. Runs it held are taken over when their leases run out; restart it or
          remove it from your set-up.
        </p>
      ) : null}
      <p>
        Runs waiting: <strong>{waiting}</strong>
        {waiting > 0 ? ` (the oldest for ${waitText(oldestWait)})` : ""}, under way: <strong>{running}</strong>.
      </p>
      <div className="table-scroll">
        <table>
          <caption className="visually-hidden">Processes</caption>
          <thead>
            <tr>
              <th scope="col">State</th>
              <th scope="col">Role</th>
              <th scope="col">Host and process</th>
              <th scope="col">Version</th>
              <th scope="col">Started</th>
              <th scope="col">Last heartbeat</th>
              <th scope="col">Busy runners</th>
              <th scope="col">Queued here</th>
            </tr>
          </thead>
          <tbody>
            {status.processes.map((process) => (
              <tr key={process.instance_id}>
                <td data-label="State">
                  {process.state === "live" ? "Live" : <strong>Lost</strong>}
                  {process.self ? " (this one)" : ""}
                </td>
                <td data-label="Role">{process.role}</td>
                <td data-label="Host and process">
                  <code>
                    {process.host} pid {process.pid}
                  </code>
                  {process.url ? <span className="muted"> {process.url}</span> : null}
                </td>
                <td data-label="Version">{process.version}</td>
                <td data-label="Started">
                  <RelativeTime value={process.started_at} />
                </td>
                <td data-label="Last heartbeat">
                  <RelativeTime value={process.heartbeat_at} />
                </td>
                <td data-label="Busy runners">{process.load.busy_runners}</td>
                <td data-label="Queued here">{process.load.queued_deliveries}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
