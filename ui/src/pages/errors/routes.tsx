import { createRoute } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";
import { ErrorsPage } from "./ErrorsPage";
import { WorkflowErrorsPage } from "./WorkflowErrorsPage";

export const errorsRoute = createRoute({ getParentRoute: () => appRoute, path: "/errors", component: ErrorsPage });

export const workflowErrorsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/errors/$workflowId",
  component: function WorkflowErrorsRoute() {
    const { workflowId } = workflowErrorsRoute.useParams();
    // Keyed: another workflow's errors start with a fresh selection.
    return <WorkflowErrorsPage key={workflowId} workflowId={workflowId} />;
  },
});
