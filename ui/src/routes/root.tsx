import { createRootRouteWithContext, createRoute, Outlet, redirect } from "@tanstack/react-router";
import type { QueryClient } from "@tanstack/react-query";
import { ApiError } from "../api/client";
import { meQuery } from "../auth/session";
import { AppLayout } from "../layout/AppLayout";

export interface RouterContext {
  queryClient: QueryClient;
}

/** The root of every page. */
export const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
});

/**
 * The signed-in part of the console (nav, top bar): every page but sign-in
 * hangs below it (`getParentRoute: () => appRoute`). Without a session it
 * sends the browser to /sign-in, remembering where it was going.
 */
export const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: "app",
  component: AppLayout,
  beforeLoad: async ({ context, location }) => {
    try {
      await context.queryClient.ensureQueryData(meQuery);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        throw redirect({ to: "/sign-in", search: { next: location.href } });
      }
      throw error;
    }
  },
});
