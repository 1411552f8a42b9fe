import { CopyButton } from "../../components/CopyButton";
import type { WorkflowView } from "./types";

/** The trigger in a few words, with the endpoint URL (and a copy button) for an HTTP one. */
export function TriggerSummary({ workflow }: { workflow: WorkflowView }) {
  const documented = workflow.triggers[0];
  const url = workflow.trigger.endpoint_url;
  return (
    <div className="trigger-summary">
      <span>{triggerWords(workflow.trigger.type, documented)}</span>
      {url ? (
        <span className="endpoint">
          <code className="endpoint-url">{url}</code>
          <CopyButton value={url} label="Copy URL" />
        </span>
      ) : null}
    </div>
  );
}

function triggerWords(type: string, documented: WorkflowView["triggers"][number] | undefined): string {
  switch (type) {
    case "http":
      return documented?.custom_response ? "HTTP (answers with $.respond)" : "HTTP";
    case "timer":
      if (documented?.cron) return `Timer, cron ${documented.cron}${documented.timezone ? ` (${documented.timezone})` : ""}`;
      if (documented?.interval_seconds) return `Timer, every ${documented.interval_seconds} s`;
      return "Timer";
    case "source":
      return `Events of source ${documented?.id ?? ""}`.trim();
    case "component":
      return "Its own source component";
    case "none":
      return "Manual (run now)";
    default:
      return type;
  }
}
