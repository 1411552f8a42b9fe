import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";

export const subscriptionsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/subscriptions",
  component: lazyRouteComponent(() => import("./SubscriptionsPage"), "SubscriptionsPage"),
});
