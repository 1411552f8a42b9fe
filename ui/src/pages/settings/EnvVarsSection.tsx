import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { api, apiData, fieldError, segment } from "../../api/client";
import { pageOfArray } from "../../api/array-page";
import type { EnvVarView } from "../../api/console-types";
import type { Page } from "../../api/types";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { PagedTable } from "../../components/PagedTable";
import { PendingButton } from "../../components/PendingButton";
import { RelativeTime } from "../../components/RelativeTime";

const envKey = ["env"] as const;

/**
 * Environment variables (`{{process.env.NAME}}` in step props). Values are
 * treated as secrets here: typed into a hidden field, never shown after
 * saving (a secret one the API does not even answer); to change one, set it again.
 */
export function EnvVarsSection() {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [secret, setSecret] = useState(true);
  const [saved, setSaved] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<EnvVarView | null>(null);

  const save = useMutation({
    mutationFn: () => apiData<EnvVarView>("PUT", `/v1/env/${segment(name.trim())}`, { body: { value, secret } }),
    onSuccess: (envVar) => {
      setSaved(envVar.name);
      setName("");
      setValue("");
      void queryClient.invalidateQueries({ queryKey: envKey });
    },
  });
  const remove = useMutation({
    mutationFn: (envVar: EnvVarView) => api<void>("DELETE", `/v1/env/${segment(envVar.name)}`),
    onSuccess: () => {
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: envKey });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(null);
    save.mutate(undefined, { onSuccess: () => save.reset() });
  };
  const nameError = fieldError(save.error, "name");
  const valueError = fieldError(save.error, "value");

  return (
    <section aria-labelledby="env-title" className="settings-section">
      <h2 id="env-title">Environment variables</h2>
      <p className="muted">
        Steps receive a variable where a prop says <code>{"{{process.env.NAME}}"}</code>. Values are not shown after saving: to change one, set it again under the same name.
      </p>
      <form onSubmit={submit} className="inline-form" aria-label="Set an environment variable">
        <div className="form-row">
          <FormField label="Variable name" description="Letters, digits and _, not starting with a digit (API_TOKEN)." error={nameError} required>
            {(ids) => (
              <input id={ids.id} aria-describedby={ids.describedBy} aria-invalid={ids.invalid} required autoComplete="off" spellCheck={false} value={name} onChange={(event) => setName(event.target.value)} />
            )}
          </FormField>
          <FormField label="Value" error={valueError} required>
            {(ids) => (
              <input
                id={ids.id}
                type="password"
                autoComplete="new-password"
                aria-describedby={ids.describedBy}
                aria-invalid={ids.invalid}
                value={value}
                onChange={(event) => setValue(event.target.value)}
              />
            )}
          </FormField>
        </div>
        <div className="check-field">
          <input id="env-secret" type="checkbox" checked={secret} onChange={(event) => setSecret(event.target.checked)} />
          <label htmlFor="env-secret">Secret: stored sealed, its value never answered by the API again</label>
        </div>
        {save.isError && !nameError && !valueError ? <ErrorMessage error={save.error} title="Could not save the variable." /> : null}
        {saved ? <p role="status">Saved {saved}.</p> : null}
        <PendingButton type="submit" pending={save.isPending} pendingText="Saving…" disabled={name.trim() === ""}>
          Save variable
        </PendingButton>
      </form>
      <PagedTable<EnvVarView>
        queryKey={envKey}
        fetchPage={async (params, signal) => pageOfArray((await api<Page<EnvVarView>>("GET", "/v1/env", { signal })).data, params)}
        caption="Environment variables"
        rowKey={(envVar) => envVar.name}
        empty={<EmptyState title="No environment variables.">Set one above; steps read it as {"{{process.env.NAME}}"}.</EmptyState>}
        columns={[
          { header: "Name", cell: (envVar) => <code>{envVar.name}</code> },
          { header: "Kind", cell: (envVar) => (envVar.secret ? "secret" : "plain") },
          { header: "Updated", cell: (envVar) => <RelativeTime value={envVar.updated_at} /> },
          {
            header: "Actions",
            className: "actions",
            cell: (envVar) => (
              <div className="row-actions">
                <button
                  type="button"
                  aria-label={`Change ${envVar.name}`}
                  onClick={() => {
                    setName(envVar.name);
                    setSecret(envVar.secret);
                    setValue("");
                  }}
                >
                  Change
                </button>
                <button type="button" className="danger-outline" aria-label={`Delete ${envVar.name}`} onClick={() => setDeleting(envVar)}>
                  Delete
                </button>
              </div>
            ),
          },
        ]}
      />
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete ${deleting?.name ?? "this variable"}?`}
        confirmLabel="Delete"
        pendingLabel="Deleting…"
        danger
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => deleting && remove.mutate(deleting)}
        onCancel={() => {
          setDeleting(null);
          remove.reset();
        }}
      >
        <p>Steps that read it fail with a ConfigurationError naming it until it is set again.</p>
      </ConfirmDialog>
    </section>
  );
}
