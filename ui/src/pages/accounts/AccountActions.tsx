import { useMutation, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { accountKeys, deleteAccount, listApps, reconnectAccount, renameAccount } from "../../api/accounts";
import { queryClient } from "../../api/query-client";
import type { AccountView } from "../../api/types";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { PendingButton } from "../../components/PendingButton";
import { filledFields, KeyFields, missingFields } from "./KeyFields";
import { OAuthContinue, type PendingConnection } from "./OAuthContinue";

const refreshList = () => void queryClient.invalidateQueries({ queryKey: accountKeys.all });

type Mode = "idle" | "rename" | "reconnect" | "delete";

/** Rename, reconnect (an account that needs it gets a prominent button) and delete, with confirmation. */
export function AccountActions({ account }: { account: AccountView }) {
  const [mode, setMode] = useState<Mode>("idle");
  const label = `${account.app_name} account ${account.name}`;
  const remove = useMutation({ mutationFn: () => deleteAccount(account.id), onSuccess: refreshList });
  return (
    <div>
      <div className="row-actions">
        <button type="button" className={account.health === "needs_reconnect" ? "primary" : undefined} aria-label={`Reconnect ${label}`} onClick={() => setMode("reconnect")}>
          Reconnect
        </button>
        <button type="button" aria-label={`Rename ${label}`} onClick={() => setMode("rename")}>
          Rename
        </button>
        <button type="button" className="danger-outline" aria-label={`Delete ${label}`} onClick={() => setMode("delete")}>
          Delete
        </button>
      </div>
      {mode === "rename" ? <RenameForm account={account} onClose={() => setMode("idle")} /> : null}
      {mode === "reconnect" ? <Reconnect account={account} onClose={() => setMode("idle")} /> : null}
      <ConfirmDialog
        open={mode === "delete"}
        title={`Delete the ${label}?`}
        confirmLabel="Delete"
        pendingLabel="Deleting…"
        danger
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => remove.mutate(undefined, { onSuccess: () => setMode("idle") })}
        onCancel={() => {
          remove.reset();
          setMode("idle");
        }}
      >
        <p>Its keys or tokens are erased. Sources and workflow steps configured with it fail with an error saying so until they are given another account.</p>
      </ConfirmDialog>
    </div>
  );
}

function RenameForm({ account, onClose }: { account: AccountView; onClose: () => void }) {
  const [name, setName] = useState(account.name);
  const rename = useMutation({
    mutationFn: (next: string) => renameAccount(account.id, next),
    onSuccess: () => {
      refreshList();
      onClose();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (name.trim() !== "") rename.mutate(name.trim());
  };
  return (
    <form onSubmit={submit} className="inline-form">
      <FormField label="New name" required error={name.trim() === "" ? "Enter a name." : null}>
        {(ids) => <input id={ids.id} aria-describedby={ids.describedBy} aria-invalid={ids.invalid} value={name} onChange={(event) => setName(event.target.value)} autoComplete="off" />}
      </FormField>
      {rename.error ? <ErrorMessage error={rename.error} title="The account was not renamed." /> : null}
      <div className="button-row">
        <PendingButton type="submit" className="primary" pending={rename.isPending} pendingText="Saving…">
          Save name
        </PendingButton>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** OAuth: a new authorization at the provider, the account keeping its id. Keys: new fields, at once. */
function Reconnect({ account, onClose }: { account: AccountView; onClose: () => void }) {
  const apps = useQuery({ queryKey: accountKeys.apps(), queryFn: ({ signal }) => listApps(signal), enabled: account.auth_type === "keys" });
  const fields = apps.data?.find((app) => app.app === account.app)?.auth.fields ?? [];
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string | undefined>>({});
  const [pending, setPending] = useState<PendingConnection | null>(null);
  const reconnect = useMutation({
    mutationFn: (sent?: Record<string, string>) => reconnectAccount(account.id, sent),
    onSuccess: (answer) => {
      setValues({});
      if ("authorization_url" in answer) {
        setPending({ app: account.app, appName: account.app_name, name: account.name, accountId: account.id, authorizationUrl: answer.authorization_url, since: Math.floor(Date.now() / 1000) - 1 });
        return;
      }
      refreshList();
      onClose();
    },
  });
  if (pending) {
    return (
      <OAuthContinue
        pending={pending}
        onDone={() => {
          refreshList();
          onClose();
        }}
      />
    );
  }
  if (account.auth_type !== "keys") {
    return (
      <div className="inline-form">
        {reconnect.error ? <ErrorMessage error={reconnect.error} title="Could not start reconnecting." /> : null}
        <div className="button-row">
          <PendingButton className="primary" pending={reconnect.isPending} pendingText="Starting…" onClick={() => reconnect.mutate(undefined)}>
            Reconnect with {account.app_name}
          </PendingButton>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </div>
    );
  }
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const missing = missingFields(fields, values);
    setErrors(missing);
    if (Object.keys(missing).length === 0) reconnect.mutate(filledFields(values));
  };
  return (
    <form onSubmit={submit} className="inline-form" noValidate>
      {apps.isError ? <ErrorMessage error={apps.error} title="Could not load the app's fields." /> : null}
      <KeyFields fields={fields} values={values} onChange={setValues} errors={errors} />
      {reconnect.error ? <ErrorMessage error={reconnect.error} title="The account was not reconnected." /> : null}
      <div className="button-row">
        <PendingButton type="submit" className="primary" pending={reconnect.isPending} pendingText="Saving…" disabled={apps.isPending}>
          Save new keys
        </PendingButton>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
