import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { api, apiData, fieldError, segment } from "../../api/client";
import type { ApiKeyView, IssuedApiKeyView, Page } from "../../api/types";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { PagedTable } from "../../components/PagedTable";
import { PendingButton } from "../../components/PendingButton";
import { RelativeTime } from "../../components/RelativeTime";
import { OnceShownSecret } from "./OnceShownSecret";

const keysKey = ["api-keys"] as const;

/** Your API keys: create one (its secret shown once), list, revoke. */
export function ApiKeysSection() {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  // The new key's secret: component state only (not the query cache), gone when the page is left.
  const [issued, setIssued] = useState<{ name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyView | null>(null);

  const create = useMutation({
    mutationFn: () => apiData<IssuedApiKeyView>("POST", "/v1/users/me/api_keys", { body: name.trim() ? { name: name.trim() } : {} }),
    onSuccess: (created) => {
      setIssued({ name: created.name, key: created.key });
      setName("");
      void queryClient.invalidateQueries({ queryKey: keysKey });
    },
  });
  const revoke = useMutation({
    mutationFn: (key: ApiKeyView) => api<void>("DELETE", `/v1/users/me/api_keys/${segment(key.id)}`),
    onSuccess: () => {
      setRevoking(null);
      void queryClient.invalidateQueries({ queryKey: keysKey });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // The mutation's own copy of the answer (with the secret) is dropped at once.
    create.mutate(undefined, { onSuccess: () => create.reset() });
  };
  const nameError = fieldError(create.error, "name");

  return (
    <section aria-labelledby="api-keys-title" className="settings-section">
      <h2 id="api-keys-title">API keys</h2>
      <form onSubmit={submit} className="inline-form">
        <FormField label="New key's name" description="To tell your keys apart: where it is used, say." error={nameError}>
          {(ids) => <input id={ids.id} aria-describedby={ids.describedBy} aria-invalid={ids.invalid} maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />}
        </FormField>
        {create.isError && !nameError ? <ErrorMessage error={create.error} title="Could not create the key." /> : null}
        <PendingButton type="submit" pending={create.isPending} pendingText="Creating…">
          Create API key
        </PendingButton>
      </form>
      {issued ? <OnceShownSecret title={`New API key ${issued.name}`} secret={issued.key} onDone={() => setIssued(null)} /> : null}
      <PagedTable<ApiKeyView>
        queryKey={keysKey}
        fetchPage={(params, signal) => api<Page<ApiKeyView>>("GET", "/v1/users/me/api_keys", { query: { ...params }, signal })}
        caption="API keys"
        rowKey={(key) => key.id}
        empty={<EmptyState title="No API keys." />}
        columns={[
          { header: "Name", cell: (key) => key.name || <span className="muted">(unnamed)</span> },
          { header: "Starts with", cell: (key) => <code>{key.prefix}…</code> },
          { header: "Created", cell: (key) => <RelativeTime value={key.created_at} /> },
          { header: "Last used", cell: (key) => (key.last_used_at === null ? <span className="muted">never</span> : <RelativeTime value={key.last_used_at} />) },
          {
            header: "Actions",
            className: "actions",
            cell: (key) =>
              key.revoked_at !== null ? (
                <span className="muted">
                  Revoked <RelativeTime value={key.revoked_at} />
                </span>
              ) : (
                <button type="button" className="danger-outline" aria-label={`Revoke key ${key.name || key.prefix}`} onClick={() => setRevoking(key)}>
                  Revoke
                </button>
              ),
          },
        ]}
      />
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this API key?"
        confirmLabel="Revoke"
        pendingLabel="Revoking…"
        danger
        pending={revoke.isPending}
        error={revoke.error}
        onConfirm={() => revoking && revoke.mutate(revoking)}
        onCancel={() => {
          setRevoking(null);
          revoke.reset();
        }}
      >
        <p>Requests with {revoking?.name || revoking?.prefix} fail from now on, and sessions signed in with it end. This cannot be undone.</p>
      </ConfirmDialog>
    </section>
  );
}
