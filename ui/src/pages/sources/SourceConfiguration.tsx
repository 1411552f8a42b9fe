import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState, type FormEvent } from "react";
import { fieldError } from "../../api/client";
import { CodeEditor } from "../../components/CodeEditor";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { Loading } from "../../components/Loading";
import { PendingButton } from "../../components/PendingButton";
import { getComponent, sourceKeys, updateSource, type SourceListItem } from "./api";

/** Props whose value the API shows but the user does not set here: the endpoint, the timer's schedule comes from its own prop. */
function editableProps(source: SourceListItem, interfaceNames: Set<string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(source.configured_props).filter(([name]) => !interfaceNames.has(name)));
}

/** Change the source's props and its code. Secret props are never shown: leave them out to keep them. */
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
  const props = component.data.configurable_props as Array<{ name: string; type?: string; secret?: boolean }>;
  const interfaceNames = new Set(props.filter((prop) => typeof prop.type === "string" && prop.type.startsWith("$.")).map((prop) => prop.name));
  const secretNames = props.filter((prop) => prop.secret).map((prop) => prop.name);
  return (
    <div className="configuration">
      <PropsEditor source={source} interfaceNames={interfaceNames} secretNames={secretNames} />
      <CodeUpdater source={source} code={component.data.code} />
    </div>
  );
}

function PropsEditor({ source, interfaceNames, secretNames }: { source: SourceListItem; interfaceNames: Set<string>; secretNames: string[] }) {
  const queryClient = useQueryClient();
  const [text, setText] = useState(() => JSON.stringify(editableProps(source, interfaceNames), null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (props: Record<string, unknown>) => updateSource(source.id, { configured_props: props }),
    onSuccess: (updated) => {
      queryClient.setQueryData(sourceKeys.one(source.id), updated);
      // What the API now shows, secrets left out: a secret just typed does not stay on the page.
      setText(JSON.stringify(editableProps(updated, interfaceNames), null, 2));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      setParseError(`This is not valid JSON: ${(error as Error).message}`);
      return;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      setParseError("Props are a JSON object: { \"name\": value, … }.");
      return;
    }
    setParseError(null);
    save.mutate(parsed as Record<string, unknown>);
  };
  const apiFieldError = fieldError(save.error, "configured_props");
  return (
    <form onSubmit={submit} className="card">
      <h2>Props</h2>
      <FormField
        label="Configured props (JSON)"
        description={secretNames.length > 0 ? `Secret props (${secretNames.join(", ")}) are not shown; leave them out to keep their values, or give a new value.` : "The values the component's props are set to."}
        error={parseError ?? apiFieldError}
      >
        {(ids) => <textarea id={ids.id} aria-describedby={ids.describedBy} aria-invalid={ids.invalid} className="mono" rows={8} value={text} onChange={(event) => setText(event.target.value)} spellCheck={false} />}
      </FormField>
      {save.error && !apiFieldError ? <ErrorMessage error={save.error} /> : null}
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
