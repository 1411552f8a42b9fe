import { createRoute } from "@tanstack/react-router";
import { Placeholder } from "../pages/Placeholder";
import { appRoute } from "./root";

// Sections whose pages are being built: each helper deletes its own placeholder here when adding its routes.
export const sourcesPlaceholder = createRoute({ getParentRoute: () => appRoute, path: "/sources", component: () => <Placeholder title="Sources" /> });
export const workflowsPlaceholder = createRoute({ getParentRoute: () => appRoute, path: "/workflows", component: () => <Placeholder title="Workflows" /> });
