import { createRoute, createRouter } from "@tanstack/react-router";
import { queryClient } from "../api/query-client";
import { HomePage } from "../pages/HomePage";
import { SignInPage } from "../pages/SignInPage";
import { NotFoundPage } from "../pages/NotFoundPage";
import { sourceRoute, sourcesRoute } from "../pages/sources/routes";
import { deploySourceRoute } from "../pages/deploy/routes";
import { workflowsRoutes } from "../pages/workflows/routes";
import { errorsRoute, workflowErrorsRoute } from "../pages/errors/routes";
import { settingsRoute } from "../pages/settings/routes";
import { subscriptionsRoute } from "../pages/subscriptions/routes";
import { accountsRoute } from "../pages/accounts/routes";
import { appRoute, rootRoute } from "./root";

/**
 * Every route of the console, in code (no generated file). To add a page:
 * define its route in your section's routes file with
 * `getParentRoute: () => appRoute`, import it here and add it to
 * `appRoute.addChildren([...])`. See ui/README.md.
 */
const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/sign-in",
  validateSearch: (search: Record<string, unknown>): { next?: string } => (typeof search.next === "string" ? { next: search.next } : {}),
  component: function SignInRoute() {
    const { next } = signInRoute.useSearch();
    return <SignInPage next={next} />;
  },
});

const homeRoute = createRoute({ getParentRoute: () => appRoute, path: "/", component: HomePage });

export const routeTree = rootRoute.addChildren([
  signInRoute,
  appRoute.addChildren([homeRoute, sourcesRoute, deploySourceRoute, sourceRoute, ...workflowsRoutes, errorsRoute, workflowErrorsRoute, subscriptionsRoute, accountsRoute, settingsRoute]),
]);

export const router = createRouter({
  routeTree,
  context: { queryClient },
  defaultPreload: "intent",
  // Loaders' data lives in TanStack Query, which decides freshness.
  defaultPreloadStaleTime: 0,
  defaultNotFoundComponent: NotFoundPage,
  scrollRestoration: true,
});

declare module "@tanstack/react-router" {
  interface Register {
    router: typeof router;
  }
}
