import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";
import { WorkflowsPage } from "./WorkflowsPage";
import "./workflows.css";

/** The workflows section: list, create, edit (heavy: CodeMirror, loaded on demand), one workflow, one run. */
export const workflowsRoute = createRoute({ getParentRoute: () => appRoute, path: "/workflows", component: WorkflowsPage });

export const newWorkflowRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/workflows/new",
  component: lazyRouteComponent(() => import("./WorkflowEditorPage"), "NewWorkflowPage"),
});

const EditWorkflowPage = lazyRouteComponent(() => import("./WorkflowEditorPage"), "EditWorkflowPage");
export const editWorkflowRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/workflows/$id/edit",
  component: function EditWorkflowRoute() {
    const { id } = editWorkflowRoute.useParams();
    return <EditWorkflowPage id={id} />;
  },
});

const WorkflowPage = lazyRouteComponent(() => import("./WorkflowPage"), "WorkflowPage");
export const workflowRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/workflows/$id",
  component: function WorkflowRoute() {
    const { id } = workflowRoute.useParams();
    return <WorkflowPage key={id} id={id} />;
  },
});

const RunPage = lazyRouteComponent(() => import("./RunPage"), "RunPage");
export const runRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/runs/$id",
  component: function RunRoute() {
    const { id } = runRoute.useParams();
    return <RunPage key={id} id={id} />;
  },
});

export const workflowsRoutes = [workflowsRoute, newWorkflowRoute, editWorkflowRoute, workflowRoute, runRoute];
