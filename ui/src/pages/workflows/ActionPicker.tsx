import { useQuery } from "@tanstack/react-query";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { Loading } from "../../components/Loading";
import { Markdown } from "../../components/Markdown";
import { getPublished, listRegistry } from "./api";

export interface ActionPickerProps {
  stepLabel: string;
  actionKey: string;
  version: string;
  keyError: string | null;
  onChange: (next: { key: string; version: string }) => void;
}

/**
 * Picks a published action (GET /v1/components/registry) by key and version,
 * and shows what it is (its props form is ActionPropsEditor's). The API runs a key's newest
 * release; an older version is shown for reading its props.
 */
export function ActionPicker({ stepLabel, actionKey, version, keyError, onChange }: ActionPickerProps) {
  const registry = useQuery({ queryKey: ["registry"], queryFn: ({ signal }) => listRegistry(signal), staleTime: 60_000 });
  const actions = (registry.data ?? []).filter((entry) => entry.kind === "action");
  const keys = [...new Set(actions.map((entry) => entry.key))];
  const versions = actions.filter((entry) => entry.key === actionKey).map((entry) => entry.version);
  const published = useQuery({
    queryKey: ["registry", actionKey, version],
    queryFn: ({ signal }) => getPublished(actionKey, version || undefined, signal),
    enabled: actionKey !== "",
    staleTime: 60_000,
  });

  if (registry.isPending) return <Loading label="Loading your published actions…" />;
  if (registry.isError) return <ErrorMessage error={registry.error} title="Could not load your published actions." />;

  const component = published.data?.component;
  return (
    <div className="action-picker">
      {keys.length === 0 && actionKey === "" ? (
        <p className="muted">You have not published any action yet. Publish one with <code>runnel publish &lt;file&gt;</code>, or write this step as code.</p>
      ) : null}
      <div className="field-row">
        <FormField label={`Action of ${stepLabel}`} error={keyError}>
          {(f) => (
            <select id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} value={actionKey} onChange={(event) => onChange({ key: event.target.value, version: "" })}>
              <option value="">Choose an action…</option>
              {keys.map((key) => (
                <option key={key} value={key}>
                  {key}
                </option>
              ))}
              {actionKey && !keys.includes(actionKey) ? <option value={actionKey}>{actionKey}</option> : null}
            </select>
          )}
        </FormField>
        <FormField label={`Version of ${stepLabel}`} description="Runs use the newest release.">
          {(f) => (
            <select id={f.id} aria-describedby={f.describedBy} value={version} disabled={!actionKey} onChange={(event) => onChange({ key: actionKey, version: event.target.value })}>
              <option value="">Newest</option>
              {versions.map((item) => (
                <option key={item} value={item}>
                  {item}
                </option>
              ))}
            </select>
          )}
        </FormField>
      </div>
      {published.isError ? <ErrorMessage error={published.error} /> : null}
      {component ? (
        <div className="action-about">
          <p>
            <strong>{component.name}</strong> <span className="muted">{component.version}</span>
          </p>
          {component.description ? <Markdown text={component.description} /> : null}
        </div>
      ) : null}
    </div>
  );
}
