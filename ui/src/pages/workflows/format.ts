/** "850 ms", "2.4 s", "3 min 5 s": a duration for a person. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The words for a run's or step's status. */
export function statusText(status: string): string {
  switch (status) {
    case "success":
      return "Succeeded";
    case "error":
      return "Failed";
    case "exited":
      return "Exited";
    case "skipped":
      return "Skipped";
    case "retrying":
      return "Retrying";
    case "delayed":
      return "Delayed";
    case "cancelled":
      return "Cancelled";
    case "pending":
      return "Waiting";
    default:
      return status;
  }
}
