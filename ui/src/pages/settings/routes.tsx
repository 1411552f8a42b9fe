import { createRoute } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";
import { SettingsPage } from "./SettingsPage";

export const settingsRoute = createRoute({ getParentRoute: () => appRoute, path: "/settings", component: SettingsPage });
