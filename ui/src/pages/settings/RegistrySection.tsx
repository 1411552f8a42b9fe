import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, apiData, segment } from "../../api/client";
import type { PublishedComponentView, RegistryListingView } from "../../api/console-types";
import type { Page } from "../../api/types";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { Markdown } from "../../components/Markdown";
import { PagedTable } from "../../components/PagedTable";
import { RelativeTime } from "../../components/RelativeTime";

/** Published actions, sources and app files, by key and version; one version's component (or app) on click. */
export function RegistrySection() {
  const [chosen, setChosen] = useState<{ key: string; version: string } | null>(null);
  return (
    <section aria-labelledby="registry-title" className="settings-section">
      <h2 id="registry-title">Published components</h2>
      <PagedTable<RegistryListingView>
        queryKey={["registry", "user"]}
        // Yours only: Runnel's catalog is on the deploy page. One item per key, with every version it has.
        fetchPage={(params, signal) => api<Page<RegistryListingView>>("GET", "/v1/components/registry", { query: { ...params, namespace: "user" }, signal })}
        caption="Published components"
        rowKey={(entry) => entry.key}
        empty={<EmptyState title="Nothing published yet.">Publish an action, a source or an app file with the CLI (<code>runnel publish {"<file>"}</code>) to use it by key.</EmptyState>}
        columns={[
          { header: "Key", cell: (entry) => <code>{entry.key}</code> },
          { header: "Kind", cell: (entry) => entry.type },
          {
            header: "Versions",
            cell: (entry) => (
              <div className="row-actions">
                {entry.versions.map((version) => (
                  <button
                    key={version.version}
                    type="button"
                    className="version-button"
                    aria-pressed={chosen?.key === entry.key && chosen.version === version.version}
                    aria-label={`${entry.key} ${version.version}`}
                    onClick={() => setChosen({ key: entry.key, version: version.version })}
                  >
                    {version.version}
                  </button>
                ))}
              </div>
            ),
          },
          { header: "Latest published", cell: (entry) => <RelativeTime value={entry.versions[0]?.published_at} /> },
        ]}
      />
      {chosen ? <PublishedVersion key={`${chosen.key}@${chosen.version}`} entryKey={chosen.key} version={chosen.version} onClose={() => setChosen(null)} /> : null}
    </section>
  );
}

/** An app file: used by components through an app prop, so its definitions and methods are what matter. */
function PublishedApp({ app, publishedAt }: { app: NonNullable<PublishedComponentView["app"]>; publishedAt: number }) {
  return (
    <>
      <p>
        <strong>{app.name}</strong> (app), published <RelativeTime value={publishedAt} />
      </p>
      {app.description ? <Markdown text={app.description} /> : null}
      <p className="muted">{`Components use it through an app prop: { type: "app", app: "${app.app}" }.`}</p>
      <h4>Prop definitions</h4>
      {app.prop_definitions.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul>
          {app.prop_definitions.map((prop, index) => (
            <li key={String(prop.name ?? index)}>
              <code>{String(prop.name)}</code> <span className="muted">{String(prop.type ?? "")}</span>
              {typeof prop.label === "string" ? ` ${prop.label}` : null}
            </li>
          ))}
        </ul>
      )}
      <h4>Methods</h4>
      {app.methods.length === 0 ? <p className="muted">None.</p> : <p>{app.methods.map((method) => `${method}()`).join(", ")}</p>}
    </>
  );
}

function PublishedVersion({ entryKey, version, onClose }: { entryKey: string; version: string; onClose: () => void }) {
  const published = useQuery({
    queryKey: ["registry", entryKey, version],
    queryFn: ({ signal }) => apiData<PublishedComponentView>("GET", `/v1/components/registry/${segment(entryKey)}`, { query: { version }, signal }),
  });
  return (
    <article className="card published" aria-labelledby="published-title">
      <h3 id="published-title">
        {entryKey} {version}
      </h3>
      {published.isPending ? (
        <Loading />
      ) : published.isError ? (
        <ErrorMessage error={published.error} title="Could not load this version." />
      ) : published.data.app ? (
        <PublishedApp app={published.data.app} publishedAt={published.data.published_at} />
      ) : published.data.component ? (
        <>
          <p>
            <strong>{published.data.component.name}</strong> ({published.data.kind}), published <RelativeTime value={published.data.published_at} />
          </p>
          {published.data.component.description ? <Markdown text={published.data.component.description} /> : null}
          <h4>Props</h4>
          {published.data.component.configurable_props.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <ul>
              {published.data.component.configurable_props.map((prop, index) => (
                <li key={String(prop.name ?? index)}>
                  <code>{String(prop.name)}</code> <span className="muted">{String(prop.type ?? "")}</span>
                  {typeof prop.label === "string" ? ` ${prop.label}` : null}
                </li>
              ))}
            </ul>
          )}
        </>
      ) : null}
      <button type="button" onClick={onClose}>
        Close
      </button>
    </article>
  );
}
