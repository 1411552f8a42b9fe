import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";

export const settingsRoute = createRoute({ getParentRoute: () => appRoute, path: "/settings", component: lazyRouteComponent(() => import("./SettingsPage"), "SettingsPage") });
