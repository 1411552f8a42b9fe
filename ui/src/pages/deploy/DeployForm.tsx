import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useCallback, useEffect, useId, useMemo, useRef, useState, type FormEvent } from "react";
import { fieldError } from "../../api/client";
import type { ComponentView } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { Markdown } from "../../components/Markdown";
import { PendingButton } from "../../components/PendingButton";
import { checkDraft, errorsFromApi, initialDraft, PropsForm, type ConfigurableProp, type LoadOptions, type PropErrors, type PropsDraft } from "../../components/props-form";
import { deploySource, draftPropOptions } from "./api";

/**
 * Step 2 of deploying: the saved component's props and the source's name,
 * checked here first, then by the API (its error shown at the field it
 * names). On success the browser goes to the new source's page, and nothing
 * typed (secrets included) stays in the page or its caches.
 */
export function DeployForm({ component }: { component: ComponentView }) {
  const props = component.configurable_props as unknown as ConfigurableProp[];
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const titleId = useId();
  const [name, setName] = useState("");
  const [draft, setDraft] = useState<PropsDraft>(() => initialDraft(props));
  const [checkErrors, setCheckErrors] = useState<PropErrors>({});
  const heading = useRef<HTMLHeadingElement>(null);
  // A keyboard or screen reader user lands on the step that just appeared, not back at the top.
  useEffect(() => heading.current?.focus(), []);

  const deploy = useMutation({
    mutationFn: (configured: Record<string, unknown>) => deploySource({ component_id: component.id, ...(name.trim() ? { name: name.trim() } : {}), configured_props: configured }),
    onSuccess: (source) => {
      // The option caches are keyed by the earlier props' values, secrets among them: drop them.
      queryClient.removeQueries({ queryKey: ["prop-options", component.id] });
      setDraft(initialDraft(props));
      void queryClient.invalidateQueries({ queryKey: ["sources"] });
      void navigate({ to: `/sources/${encodeURIComponent(source.id)}` });
    },
  });

  const loadOptions: LoadOptions = useCallback((request, signal) => draftPropOptions(component.id, request, signal), [component.id]);
  const apiPropErrors = useMemo(() => errorsFromApi(deploy.error, props), [deploy.error, props]);
  const nameError = fieldError(deploy.error, "name");

  const onChange = (next: PropsDraft) => {
    setDraft(next);
    // An edited field's old complaint no longer applies.
    const changed = Object.keys(next).filter((key) => next[key] !== draft[key]);
    if (apiPropErrors && changed.some((key) => apiPropErrors[key])) deploy.reset();
    if (changed.some((key) => checkErrors[key])) setCheckErrors((errors) => ({ ...errors, ...Object.fromEntries(changed.map((key) => [key, undefined])) }));
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkDraft(props, draft);
    setCheckErrors(checked.errors);
    if (Object.values(checked.errors).some(Boolean)) return;
    deploy.mutate(checked.values);
  };

  const errors = { ...checkErrors, ...(apiPropErrors ?? {}) };
  const hasCheckErrors = Object.values(checkErrors).some(Boolean);
  return (
    <form className="card deploy-step" onSubmit={submit} aria-labelledby={titleId} noValidate>
      <h2 id={titleId} ref={heading} tabIndex={-1}>
        2. Configure and deploy
      </h2>
      <div className="component-summary">
        <p>
          <strong>{component.name}</strong> <span className="muted">{`version ${component.version}${component.key ? ` · ${component.key}` : ""}`}</span>
        </p>
        {component.description ? <Markdown text={component.description} className="muted" /> : null}
      </div>
      <FormField label="Source name" description="How you find it in lists and the CLI; left empty, the component's name is used." error={nameError}>
        {(f) => (
          <input id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} value={name} placeholder={component.name} maxLength={200} onChange={(event) => setName(event.target.value)} />
        )}
      </FormField>
      <h3>Props</h3>
      <PropsForm props={props} draft={draft} onChange={onChange} errors={errors} optionsKey={component.id} loadOptions={loadOptions} disabled={deploy.isPending} />
      {hasCheckErrors ? (
        <p className="field-error" role="alert">
          Some props need attention: see the messages above.
        </p>
      ) : null}
      {deploy.error && !apiPropErrors && !nameError ? <ErrorMessage error={deploy.error} title="The source was not deployed." /> : null}
      {apiPropErrors ? (
        <p className="field-error" role="alert">
          The server refused a prop: see the message at its field.
        </p>
      ) : null}
      <PendingButton type="submit" className="primary" pending={deploy.isPending} pendingText="Deploying…">
        Deploy
      </PendingButton>
    </form>
  );
}
