import { createRoute, redirect, type ParsedLocation } from "@tanstack/react-router";
import { appRoute } from "../../routes/root";
// Small: the heavy part (CodeMirror) loads on demand inside CodeEditor.
import { DeployPage } from "./DeployPage";

/** What a deploy URL may carry (the hosted service's patterns). */
export interface DeploySearch {
  key?: string;
  url?: string;
}

function deploySearch(search: Record<string, unknown>): DeploySearch {
  const out: DeploySearch = {};
  if (typeof search.key === "string" && search.key !== "") out.key = search.key;
  if (typeof search.url === "string" && search.url !== "") out.url = search.url;
  return out;
}

/** `/sources/new[?key=…|?url=…]`: the deploy page, pre-filled by a deploy URL. */
export const deploySourceRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/sources/new",
  validateSearch: deploySearch,
  component: function DeploySourceRoute() {
    const { key, url } = deploySourceRoute.useSearch();
    return <DeployPage initialKey={key} initialUrl={url} />;
  },
});

/**
 * The `beforeLoad` of the Sources list route: the hosted service's deploy URLs
 * (`/sources?action=create&key=<key>`, `…&url=<url-encoded-url>`) open the
 * deploy page with the same key or URL. Sources' own route only needs
 * `beforeLoad: redirectDeployUrl`.
 */
export function redirectDeployUrl({ location }: { location: ParsedLocation }): void {
  const search = location.search as Record<string, unknown>;
  if (search.action !== "create") return;
  throw redirect({ to: "/sources/new", search: deploySearch(search), replace: true });
}
