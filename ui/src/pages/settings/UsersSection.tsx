import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ApiError, api, apiData, fieldError } from "../../api/client";
import type { CreatedUserView } from "../../api/console-types";
import type { Page, UserView } from "../../api/types";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { Loading } from "../../components/Loading";
import { PagedTable } from "../../components/PagedTable";
import { PendingButton } from "../../components/PendingButton";
import { RelativeTime } from "../../components/RelativeTime";
import { OnceShownSecret } from "./OnceShownSecret";

const usersKey = ["users", "all"] as const;

/** Users of this server (admins only): create one (its first API key shown once); the list where the API offers it. */
export function UsersSection() {
  const queryClient = useQueryClient();
  const [username, setUsername] = useState("");
  const [email, setEmail] = useState("");
  const [admin, setAdmin] = useState(false);
  const [issued, setIssued] = useState<{ username: string; key: string } | null>(null);
  const create = useMutation({
    mutationFn: () => apiData<CreatedUserView>("POST", "/v1/users", { body: { username: username.trim(), email: email.trim() || null, admin } }),
    onSuccess: (user) => {
      setIssued({ username: user.username, key: user.api_key.key });
      setUsername("");
      setEmail("");
      setAdmin(false);
      void queryClient.invalidateQueries({ queryKey: usersKey });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(undefined, { onSuccess: () => create.reset() });
  };
  const usernameError = fieldError(create.error, "username");
  const emailError = fieldError(create.error, "email");

  return (
    <section aria-labelledby="users-title" className="settings-section">
      <h2 id="users-title">Users</h2>
      <UserList />
      <form onSubmit={submit} className="inline-form" aria-label="Create a user">
        <div className="form-row">
          <FormField label="Username" description="Lower-case letters, digits, - and _." error={usernameError} required>
            {(ids) => (
              <input id={ids.id} aria-describedby={ids.describedBy} aria-invalid={ids.invalid} required autoComplete="off" value={username} onChange={(event) => setUsername(event.target.value)} />
            )}
          </FormField>
          <FormField label="E-mail" description="Where their error notices go (optional)." error={emailError}>
            {(ids) => <input id={ids.id} type="email" aria-describedby={ids.describedBy} aria-invalid={ids.invalid} value={email} onChange={(event) => setEmail(event.target.value)} />}
          </FormField>
        </div>
        <div className="check-field">
          <input id="new-user-admin" type="checkbox" checked={admin} onChange={(event) => setAdmin(event.target.checked)} />
          <label htmlFor="new-user-admin">Admin: may create users</label>
        </div>
        {create.isError && !usernameError && !emailError ? <ErrorMessage error={create.error} title="Could not create the user." /> : null}
        <PendingButton type="submit" pending={create.isPending} pendingText="Creating…">
          Create user
        </PendingButton>
      </form>
      {issued ? <OnceShownSecret title={`API key of ${issued.username}`} secret={issued.key} onDone={() => setIssued(null)} /> : null}
    </section>
  );
}

/** GET /v1/users, when this server's API has it (it is not in every version): otherwise a plain note. */
function UserList() {
  const probe = useQuery({
    queryKey: [...usersKey, "probe"],
    queryFn: ({ signal }) => api<Page<UserView>>("GET", "/v1/users", { query: { limit: 1 }, signal }),
    retry: false,
  });
  if (probe.isPending) return <Loading label="Loading users…" />;
  if (probe.isError) {
    if (probe.error instanceof ApiError && (probe.error.status === 404 || probe.error.status === 405)) {
      return <p className="muted">This server's API cannot list users yet (GET /v1/users): users you create below still work, each with the key shown once.</p>;
    }
    return <ErrorMessage error={probe.error} title="Could not load users." />;
  }
  return (
    <PagedTable<UserView>
      queryKey={usersKey}
      fetchPage={(params, signal) => api<Page<UserView>>("GET", "/v1/users", { query: { ...params }, signal })}
      caption="Users"
      rowKey={(user) => user.id}
      empty={<EmptyState title="No users." />}
      columns={[
        { header: "Username", cell: (user) => user.username },
        { header: "E-mail", cell: (user) => user.email ?? <span className="muted">none</span> },
        { header: "Admin", cell: (user) => (user.is_admin ? "yes" : "no") },
        { header: "Created", cell: (user) => <RelativeTime value={user.created_at} /> },
      ]}
    />
  );
}
