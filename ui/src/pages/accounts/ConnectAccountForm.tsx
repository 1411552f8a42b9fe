import { useMutation, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { accountKeys, connectKeysAccount, listApps, startOAuth } from "../../api/accounts";
import { fieldError } from "../../api/client";
import { queryClient } from "../../api/query-client";
import type { AppView } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { PendingButton } from "../../components/PendingButton";
import { filledFields, KeyFields, missingFields } from "./KeyFields";
import { OAuthContinue, type PendingConnection } from "./OAuthContinue";

/**
 * Connect an account: pick the app, name the account, then either its key
 * fields (sent once, never shown again) or, for an OAuth app, the link to the
 * provider.
 */
export function ConnectAccountForm({ initialApp }: { initialApp?: string | undefined }) {
  const apps = useQuery({ queryKey: accountKeys.apps(), queryFn: ({ signal }) => listApps(signal) });
  const [slug, setSlug] = useState(initialApp ?? "");
  const [name, setName] = useState("");
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string | undefined>>({});
  const [pending, setPending] = useState<PendingConnection | null>(null);
  const [connectedName, setConnectedName] = useState<string | null>(null);
  const connectable = (apps.data ?? []).filter((app) => app.auth.type !== "none");
  const app: AppView | undefined = connectable.find((candidate) => candidate.app === slug);

  const reset = () => {
    setName("");
    setValues({});
    setErrors({});
  };
  const keys = useMutation({
    mutationFn: connectKeysAccount,
    onSuccess: (account) => {
      // The typed secrets leave the page's state with the answer.
      reset();
      setConnectedName(`${account.app_name} account '${account.name}'`);
      void queryClient.invalidateQueries({ queryKey: accountKeys.all });
    },
  });
  const oauth = useMutation({
    mutationFn: startOAuth,
    onSuccess: (started, body) => {
      if (!app) return;
      setPending({ app: app.app, appName: app.name, name: body.name, authorizationUrl: started.authorization_url, since: Math.floor(Date.now() / 1000) - 1 });
      reset();
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setConnectedName(null);
    if (!app) return setErrors({ app: "Choose the app to connect." });
    const missing: Record<string, string | undefined> = name.trim() === "" ? { name: "Name the account, e.g. work or personal." } : {};
    if (app.auth.type === "keys") Object.assign(missing, missingFields(app.auth.fields ?? [], values));
    setErrors(missing);
    if (Object.keys(missing).length > 0) return;
    if (app.auth.type === "keys") keys.mutate({ app: app.app, name: name.trim(), fields: filledFields(values) });
    else oauth.mutate({ app: app.app, name: name.trim() });
  };

  const mutation = app?.auth.type === "keys" ? keys : oauth;
  return (
    <section className="connect-account" aria-labelledby="connect-title">
      <h2 id="connect-title">Connect an account</h2>
      {apps.isError ? <ErrorMessage error={apps.error} title="Could not load the apps." /> : null}
      {pending ? (
        <OAuthContinue
          pending={pending}
          onDone={() => {
            setPending(null);
            void queryClient.invalidateQueries({ queryKey: accountKeys.all });
          }}
        />
      ) : (
        <form onSubmit={submit} noValidate>
          <FormField label="App" required error={errors.app}>
            {(ids) => (
              <select
                id={ids.id}
                aria-describedby={ids.describedBy}
                aria-invalid={ids.invalid}
                value={app ? slug : ""}
                disabled={apps.isPending}
                onChange={(event) => {
                  setSlug(event.target.value);
                  setValues({});
                  setErrors({});
                }}
              >
                <option value="">{apps.isPending ? "Loading apps…" : "Choose an app…"}</option>
                {connectable.map((candidate) => (
                  <option key={candidate.app} value={candidate.app}>
                    {candidate.name}
                  </option>
                ))}
              </select>
            )}
          </FormField>
          <FormField label="Account name" required error={errors.name ?? fieldError(mutation.error, "name")} description="Yours to tell accounts apart, e.g. work or personal.">
            {(ids) => <input id={ids.id} aria-describedby={ids.describedBy} aria-invalid={ids.invalid} value={name} onChange={(event) => setName(event.target.value)} autoComplete="off" />}
          </FormField>
          {app?.auth.type === "keys" ? <KeyFields fields={app.auth.fields ?? []} values={values} onChange={setValues} errors={errors} /> : null}
          {app?.auth.type === "oauth" ? (
            <p className="muted">{app.oauth_client ? `You will sign in at ${app.name} and allow access; Runnel keeps the tokens encrypted and refreshes them.` : `${app.name} has no OAuth client on this server yet: an admin must set one first.`}</p>
          ) : null}
          {mutation.error && !fieldError(mutation.error, "name") ? <ErrorMessage error={mutation.error} title="The account was not connected." /> : null}
          <PendingButton type="submit" className="primary" pending={mutation.isPending} pendingText="Connecting…">
            {app?.auth.type === "oauth" ? `Connect with ${app.name}` : "Connect"}
          </PendingButton>
          {connectedName ? (
            <p role="status" className="health-ok">
              Your {connectedName} is connected.
            </p>
          ) : null}
        </form>
      )}
    </section>
  );
}
