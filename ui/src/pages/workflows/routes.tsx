import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";
import { WorkflowsPage } from "./WorkflowsPage";
import "./workflows.css";

/**
 * The workflows section: list, create, edit, one workflow, one run. All but the
 * list load on demand (the editor brings CodeMirror); the router preloads a
 * lazy route component before showing it, so each page is the route's
 * component itself and reads its `$id` through getRouteApi.
 */
export const workflowsRoute = createRoute({ getParentRoute: () => appRoute, path: "/workflows", component: WorkflowsPage });

export const newWorkflowRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/workflows/new",
  component: lazyRouteComponent(() => import("./WorkflowEditorPage"), "NewWorkflowPage"),
});

export const editWorkflowRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/workflows/$id/edit",
  component: lazyRouteComponent(() => import("./WorkflowEditorPage"), "EditWorkflowPage"),
});

export const workflowRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/workflows/$id",
  component: lazyRouteComponent(() => import("./WorkflowPage"), "WorkflowPage"),
});

export const runRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/runs/$id",
  component: lazyRouteComponent(() => import("./RunPage"), "RunPage"),
});

export const workflowsRoutes = [workflowsRoute, newWorkflowRoute, editWorkflowRoute, workflowRoute, runRoute];
