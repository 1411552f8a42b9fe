import { useQuery } from "@tanstack/react-query";
import { useState, type KeyboardEvent } from "react";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { registryApps, searchRegistry, type RegistryFilters } from "./api";

const TYPES: Array<{ value: RegistryFilters["type"]; label: string }> = [
  { value: "source", label: "Sources" },
  { value: "action", label: "Actions" },
  { value: "app", label: "Apps" },
  { value: "", label: "Everything" },
];

/**
 * The registry, searchable: Runnel's catalog and the components you
 * published, by words, app and type (source, action, app). Picking a source
 * loads it for deploy; an action is shown with how to use it (a workflow
 * step), an app with how components use it (an app prop): neither deploys.
 */
export function RegistrySearch({ onPick }: { onPick: (key: string) => void }) {
  const [typed, setTyped] = useState("");
  const [filters, setFilters] = useState<RegistryFilters>({ q: "", app: "", type: "source" });
  const apps = useQuery({ queryKey: ["registry-apps"], queryFn: ({ signal }) => registryApps(signal), staleTime: 60_000 });
  const found = useQuery({ queryKey: ["registry-search", filters], queryFn: ({ signal }) => searchRegistry(filters, signal) });
  const search = () => setFilters((current) => ({ ...current, q: typed.trim() }));
  const onKey = (event: KeyboardEvent<HTMLInputElement>) => {
    // Enter searches here; it must not load the component (the form around this).
    if (event.key === "Enter") {
      event.preventDefault();
      search();
    }
  };
  const filtered = filters.q !== "" || filters.app !== "";
  return (
    <div className="registry-search">
      <div className="registry-filters">
        <input type="search" aria-label="Search the registry" placeholder="Search the registry, like: new request" value={typed} onChange={(event) => setTyped(event.target.value)} onKeyDown={onKey} />
        <select aria-label="App" value={filters.app} onChange={(event) => setFilters((current) => ({ ...current, app: event.target.value }))}>
          <option value="">All apps</option>
          {(apps.data ?? []).map((app) => (
            <option key={app} value={app}>
              {app}
            </option>
          ))}
        </select>
        <select aria-label="Type" value={filters.type} onChange={(event) => setFilters((current) => ({ ...current, type: event.target.value as RegistryFilters["type"] }))}>
          {TYPES.map((type) => (
            <option key={type.value} value={type.value}>
              {type.label}
            </option>
          ))}
        </select>
        <button type="button" onClick={search}>
          Search
        </button>
      </div>
      {found.isPending ? <Loading label="Reading the registry…" /> : null}
      {found.isError ? <ErrorMessage error={found.error} title="The registry could not be read." /> : null}
      {found.isSuccess && found.data.length === 0 ? (
        <p className="muted">{filtered ? "Nothing in the registry matches: try fewer words, or all apps." : "The registry is empty: runnel publish <file> adds a component."}</p>
      ) : null}
      {found.isSuccess && found.data.length > 0 ? (
        <ul className="registry-results" aria-label="Registry components">
          {found.data.map((listing) => (
            <li key={listing.key} className="registry-result">
              <div className="registry-result-title">
                {listing.type === "source" ? (
                  <button type="button" className="link-button" onClick={() => onPick(listing.key)} aria-label={`${listing.name}: use ${listing.key}`}>
                    {listing.name}
                  </button>
                ) : (
                  <strong>{listing.name}</strong>
                )}{" "}
                <code>{listing.key}</code>{" "}
                <span className="muted">{`${listing.type} · ${listing.version}${listing.namespace === "catalog" ? " · Runnel catalog" : " · yours"}`}</span>
              </div>
              {listing.description ? <p className="muted registry-result-description">{listing.description}</p> : null}
              {listing.type === "action" ? <p className="muted registry-result-description">{`An action runs as a workflow step: add it to a workflow with key ${listing.key}.`}</p> : null}
              {listing.type === "app" ? (
                <p className="muted registry-result-description">
                  {`An app is not deployed: a component uses it through an app prop, { type: "app", app: "${listing.key}" }`}
                  {listing.app && listing.app.methods.length > 0 ? `, then calls ${listing.app.methods.map((method) => `this.<prop>.${method}()`).join(", ")}.` : "."}
                </p>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
