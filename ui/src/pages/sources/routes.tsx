import { createRoute } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";
import { redirectDeployUrl } from "../deploy/routes";
import { SourcePage } from "./SourcePage";
import { SourcesPage } from "./SourcesPage";

export const sourcesRoute = createRoute({ getParentRoute: () => appRoute, path: "/sources", beforeLoad: redirectDeployUrl, component: SourcesPage });

export const sourceRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/sources/$id",
  component: function SourceRoute() {
    const { id } = sourceRoute.useParams();
    // Keyed: another source's page starts fresh (its own stream, tab and selection).
    return <SourcePage key={id} id={id} />;
  },
});
