import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";

/** `/accounts?app=<slug>`: the app pre-selected in the connect form (the props form's "Connect a new one" links here). */
export const accountsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/accounts",
  validateSearch: (search: Record<string, unknown>): { app?: string } => (typeof search.app === "string" && search.app !== "" ? { app: search.app } : {}),
  component: lazyRouteComponent(() => import("./AccountsPage"), "AccountsPage"),
});
