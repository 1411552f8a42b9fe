import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useCallback, useMemo, useState, type FormEvent } from "react";
import { CodeEditor } from "../../components/CodeEditor";
import { ErrorMessage } from "../../components/ErrorMessage";
import { checkDraft, errorsFromApi, initialDraft, PropsForm, type ConfigurableProp, type LoadOptions, type PropErrors, type PropsDraft } from "../../components/props-form";
import { Loading } from "../../components/Loading";
import { PendingButton } from "../../components/PendingButton";
import { draftPropOptions } from "../deploy/api";
import { getComponent, sourceKeys, updateSource, type SourceListItem } from "./api";

/**
 * The props as the form edits them here: the API never shows a secret's
 * value and keeps the stored one when an update leaves it out, so a secret
 * may be left empty (optional for the form's own check), and says so.
 */
function editableProps(props: ConfigurableProp[]): ConfigurableProp[] {
  return props.map((prop) => {
    if (!prop.secret) return prop;
    const keep = "Hidden once saved: leave empty to keep the current value, or type a new one.";
    return { ...prop, optional: true, description: prop.description ? `${prop.description}\n\n${keep}` : keep };
  });
}

/** The current values to start from; secret ones never (the API does not show them, and the field starts empty). */
function shownValues(props: ConfigurableProp[], configured: Record<string, unknown>): Record<string, unknown> {
  const secret = new Set(props.filter((prop) => prop.secret).map((prop) => prop.name));
  return Object.fromEntries(Object.entries(configured).filter(([name]) => !secret.has(name)));
}

/** Change the source's props (through the props form) and its code. Secret props are never shown: left empty, they keep their values. */
export function SourceConfiguration({ source }: { source: SourceListItem }) {
  // New code is a new component (another id): the editor stays as it is while that one loads, instead of starting over.
  const component = useQuery({ queryKey: ["components", source.component_id], queryFn: ({ signal }) => getComponent(source.component_id, signal), placeholderData: keepPreviousData });
  if (source.owned_by_workflow) {
    return (
      <p>
        This source is the trigger of the workflow <Link to="/workflows">{source.owned_by_workflow.name}</Link>: change it with that workflow.
      </p>
    );
  }
  if (component.isPending) return <Loading label="Loading the component…" />;
  if (component.isError) return <ErrorMessage error={component.error} title="Could not load the component." />;
  return (
    <div className="configuration">
      <PropsEditor
        // A new component (new code) may declare other props: a fresh form for it.
        key={component.data.id}
        source={source}
        componentId={component.data.id}
        declared={component.data.configurable_props as unknown as ConfigurableProp[]}
      />
      <CodeUpdater source={source} code={component.data.code} />
    </div>
  );
}

function PropsEditor({ source, componentId, declared }: { source: SourceListItem; componentId: string; declared: ConfigurableProp[] }) {
  const queryClient = useQueryClient();
  const props = useMemo(() => editableProps(declared), [declared]);
  const [draft, setDraft] = useState<PropsDraft>(() => initialDraft(declared, shownValues(declared, source.configured_props)));
  const [checkErrors, setCheckErrors] = useState<PropErrors>({});
  const save = useMutation({
    mutationFn: (configured: Record<string, unknown>) => updateSource(source.id, { configured_props: configured }),
    onSuccess: (updated) => {
      queryClient.setQueryData(sourceKeys.one(source.id), updated);
      // What the API now holds, secrets left out: a secret just typed does not stay on the page.
      setDraft(initialDraft(declared, shownValues(declared, updated.configured_props)));
    },
  });
  const loadOptions: LoadOptions = useCallback((request, signal) => draftPropOptions(componentId, request, signal), [componentId]);
  const apiPropErrors = useMemo(() => errorsFromApi(save.error, props), [save.error, props]);

  const onChange = (next: PropsDraft) => {
    setDraft(next);
    // An edited field's old complaint no longer applies.
    const changed = Object.keys(next).filter((key) => next[key] !== draft[key]);
    if (apiPropErrors && changed.some((key) => apiPropErrors[key])) save.reset();
    if (changed.some((key) => checkErrors[key])) setCheckErrors((errors) => ({ ...errors, ...Object.fromEntries(changed.map((key) => [key, undefined])) }));
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkDraft(props, draft);
    setCheckErrors(checked.errors);
    if (Object.values(checked.errors).some(Boolean)) return;
    // A secret left empty is left out of the body: the API keeps its value.
    save.mutate(checked.values);
  };

  return (
    <form onSubmit={submit} className="card" noValidate>
      <h2>Props</h2>
      <PropsForm props={props} draft={draft} onChange={onChange} errors={{ ...checkErrors, ...(apiPropErrors ?? {}) }} optionsKey={componentId} loadOptions={loadOptions} disabled={save.isPending} />
      {save.error && !apiPropErrors ? <ErrorMessage error={save.error} title="The props were not saved." /> : null}
      {save.isSuccess ? (
        <p role="status" className="success-message">
          Saved: the source was restarted with these props.
        </p>
      ) : null}
      <PendingButton type="submit" className="primary" pending={save.isPending} pendingText="Saving…">
        Save props
      </PendingButton>
    </form>
  );
}

function CodeUpdater({ source, code }: { source: SourceListItem; code: string }) {
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState(code);
  const save = useMutation({
    mutationFn: () => updateSource(source.id, { component_code: draft }),
    onSuccess: (updated) => queryClient.setQueryData(sourceKeys.one(source.id), updated),
  });
  return (
    <form
      className="card"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <h2>Code</h2>
      <CodeEditor value={draft} onChange={setDraft} ariaLabel="The source's code" />
      <ErrorMessage error={save.error} title="The code was not saved." />
      {save.isSuccess ? (
        <p role="status" className="success-message">
          Saved: the source runs the new code.
        </p>
      ) : null}
      <PendingButton type="submit" className="primary" pending={save.isPending} pendingText="Saving…" disabled={draft === code && !save.isError}>
        Save code
      </PendingButton>
    </form>
  );
}
