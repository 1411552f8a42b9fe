import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";

// Loaded on first visit: the console's first load stays small.
export const errorsRoute = createRoute({ getParentRoute: () => appRoute, path: "/errors", component: lazyRouteComponent(() => import("./ErrorsPage"), "ErrorsPage") });

export const workflowErrorsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/errors/$workflowId",
  component: lazyRouteComponent(() => import("./WorkflowErrorsRoute"), "WorkflowErrorsRoute"),
});
