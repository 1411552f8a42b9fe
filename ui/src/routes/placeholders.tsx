import { createRoute } from "@tanstack/react-router";
import { Placeholder } from "../pages/Placeholder";
import { appRoute } from "./root";

// Sections whose pages are being built: each helper deletes its own placeholder here when adding its routes.
export const errorsPlaceholder = createRoute({ getParentRoute: () => appRoute, path: "/errors", component: () => <Placeholder title="Errors" /> });
export const subscriptionsPlaceholder = createRoute({ getParentRoute: () => appRoute, path: "/subscriptions", component: () => <Placeholder title="Subscriptions" /> });
export const settingsPlaceholder = createRoute({ getParentRoute: () => appRoute, path: "/settings", component: () => <Placeholder title="Settings" /> });
