import { statusText } from "./format";

/** A run's or step's status as a labelled, coloured word (the colour is never the only signal). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`status-badge status-${status.replace(/[^a-z]/g, "")}`}>{statusText(status)}</span>;
}
