import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { apiData, segment } from "../../api/client";
import { pageOfArray } from "../../api/array-page";
import type { PublishedComponentView, RegistryEntryView } from "../../api/console-types";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { Markdown } from "../../components/Markdown";
import { PagedTable } from "../../components/PagedTable";
import { RelativeTime } from "../../components/RelativeTime";

interface PublishedKey {
  key: string;
  kind: RegistryEntryView["kind"];
  /** Newest first, as the API lists them. */
  versions: RegistryEntryView[];
}

/** The API lists every version, keys alphabetically: grouped here by key. */
function byKey(entries: RegistryEntryView[]): PublishedKey[] {
  const keys = new Map<string, PublishedKey>();
  for (const entry of entries) {
    const known = keys.get(entry.key) ?? { key: entry.key, kind: entry.kind, versions: [] };
    known.versions.push(entry);
    keys.set(entry.key, known);
  }
  return [...keys.values()];
}

/** Published actions, sources and app files, by key and version; one version's component (or app) on click. */
export function RegistrySection() {
  const [chosen, setChosen] = useState<{ key: string; version: string } | null>(null);
  return (
    <section aria-labelledby="registry-title" className="settings-section">
      <h2 id="registry-title">Published components</h2>
      <PagedTable<PublishedKey>
        queryKey={["registry"]}
        fetchPage={async (params, signal) => pageOfArray(byKey(await apiData<RegistryEntryView[]>("GET", "/v1/components/registry", { signal })), params)}
        caption="Published components"
        rowKey={(entry) => entry.key}
        empty={<EmptyState title="Nothing published yet.">Publish an action, a source or an app file with the CLI (<code>runnel publish {"<file>"}</code>) to use it by key.</EmptyState>}
        columns={[
          { header: "Key", cell: (entry) => <code>{entry.key}</code> },
          { header: "Kind", cell: (entry) => entry.kind },
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
