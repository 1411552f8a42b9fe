import { useParams } from "@tanstack/react-router";
import { WorkflowErrorsPage } from "./WorkflowErrorsPage";

/** /errors/$workflowId, keyed by the id: another workflow's errors start with a fresh selection. */
export function WorkflowErrorsRoute() {
  const { workflowId } = useParams({ strict: false });
  if (workflowId === undefined) return null;
  return <WorkflowErrorsPage key={workflowId} workflowId={workflowId} />;
}
