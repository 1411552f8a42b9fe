import { createRoute } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";
import { SubscriptionsPage } from "./SubscriptionsPage";

export const subscriptionsRoute = createRoute({ getParentRoute: () => appRoute, path: "/subscriptions", component: SubscriptionsPage });
