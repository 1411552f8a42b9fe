import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { ApiError } from "../../api/client";
import { CopyButton } from "../../components/CopyButton";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { RelativeTime } from "../../components/RelativeTime";
import { getComponent, getSource, sourceKeys } from "./api";
import { EventInspector } from "./EventInspector";
import { SourceActions } from "./SourceActions";
import { SourceConfiguration } from "./SourceConfiguration";
import { SourceLogs } from "./SourceLogs";

const TABS = ["Events", "Logs", "Configuration"] as const;
type Tab = (typeof TABS)[number];

/** One source: what it is, its actions, and its events, logs and configuration. */
export function SourcePage({ id }: { id: string }) {
  const query = useQuery({ queryKey: sourceKeys.one(id), queryFn: ({ signal }) => getSource(id, signal) });
  const [tab, setTab] = useState<Tab>("Events");
  // The component's own name (and version) says what runs; shared with the configuration tab's query.
  const componentId = query.data?.component_id;
  const component = useQuery({ queryKey: ["components", componentId], queryFn: ({ signal }) => getComponent(componentId ?? "", signal), enabled: componentId !== undefined });

  if (query.isPending) return <Loading label="Loading the source…" />;
  if (query.isError) {
    const missing = query.error instanceof ApiError && query.error.status === 404;
    return (
      <section>
        <h1>{missing ? "No such source" : "Source"}</h1>
        <ErrorMessage error={query.error} />
        <Link to="/sources">All sources</Link>
      </section>
    );
  }
  const source = query.data;
  return (
    <section aria-labelledby="source-title">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link to="/sources">Sources</Link> / <span>{source.name}</span>
      </nav>
      <h1 id="source-title">{source.name}</h1>
      <dl className="facts">
        <dt>Id</dt>
        <dd>
          <code>{source.id}</code>
        </dd>
        <dt>Component</dt>
        <dd>
          {component.data ? `${component.data.name} ${component.data.version}` : null}
          {source.component_key ? <code className="component-key">{source.component_key}</code> : <span className="muted"> (own code)</span>}
        </dd>
        <dt>Active</dt>
        <dd>{source.active ? "yes" : "no"}</dd>
        {source.endpoint_url ? (
          <>
            <dt>Endpoint</dt>
            <dd className="endpoint">
              <code>{source.endpoint_url}</code> <CopyButton value={source.endpoint_url} label="Copy URL" />
            </dd>
          </>
        ) : null}
        <dt>Updated</dt>
        <dd>
          <RelativeTime value={source.updated_at} />
        </dd>
      </dl>
      <SourceActions source={source} />
      <div role="tablist" aria-label="Source" className="tabs">
        {TABS.map((name) => (
          <button
            key={name}
            type="button"
            role="tab"
            id={`tab-${name}`}
            aria-selected={tab === name}
            aria-controls={`panel-${name}`}
            tabIndex={tab === name ? 0 : -1}
            onClick={() => setTab(name)}
            onKeyDown={(event) => {
              const at = TABS.indexOf(name);
              const next = event.key === "ArrowRight" ? TABS[(at + 1) % TABS.length] : event.key === "ArrowLeft" ? TABS[(at + TABS.length - 1) % TABS.length] : null;
              if (next) {
                setTab(next);
                document.getElementById(`tab-${next}`)?.focus();
              }
            }}
          >
            {name}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-panel">
        {tab === "Events" ? <EventInspector sourceId={source.id} /> : tab === "Logs" ? <SourceLogs sourceId={source.id} /> : <SourceConfiguration source={source} />}
      </div>
    </section>
  );
}
