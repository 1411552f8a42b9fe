import { useMutation } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { signIn } from "../auth/session";
import { ErrorMessage } from "../components/ErrorMessage";
import { PendingButton } from "../components/PendingButton";

/** Where to go after signing in: only a path of this console, never another site. */
export function safeNext(next: string | undefined): string {
  // "//host" and "/\host" are other sites to a browser.
  return next && next.startsWith("/") && !next.startsWith("//") && !next.includes("\\") && !next.startsWith("/sign-in") ? next : "/";
}

/**
 * Sign-in: the API key in a password field, exchanged for a session cookie.
 * A one-time link (`runnel open`) arrives as /sign-in#token=…: exchanged at
 * once, and the token taken out of the address bar and history.
 */
export function SignInPage({ next }: { next: string | undefined }) {
  const navigate = useNavigate();
  const keyId = useId();
  const [apiKey, setApiKey] = useState("");
  const linkTried = useRef(false);
  const mutation = useMutation({
    mutationFn: signIn,
    onSuccess: () => {
      setApiKey("");
      void navigate({ to: safeNext(next), replace: true });
    },
  });

  useEffect(() => {
    const token = new URLSearchParams(window.location.hash.slice(1)).get("token");
    if (!token || linkTried.current) return;
    linkTried.current = true;
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
    mutation.mutate({ sign_in_token: token });
  }, [mutation]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    mutation.mutate({ api_key: apiKey });
  };

  return (
    <main className="sign-in" id="main">
      <form className="card sign-in-card" onSubmit={submit} aria-labelledby={`${keyId}-title`}>
        <h1 id={`${keyId}-title`}>Sign in to Runnel</h1>
        <p className="muted">
          Paste an API key. <code>runnel keys create</code> makes one; <code>runnel open</code> signs you in without one.
        </p>
        <div className="field">
          <label htmlFor={keyId}>API key</label>
          <input
            id={keyId}
            name="api_key"
            type="password"
            autoComplete="current-password"
            spellCheck={false}
            required
            placeholder="rnl_…"
            value={apiKey}
            onChange={(event) => setApiKey(event.target.value)}
          />
        </div>
        {mutation.error ? <ErrorMessage error={mutation.error} /> : null}
        <PendingButton type="submit" className="primary" pending={mutation.isPending} pendingText="Signing in…">
          Sign in
        </PendingButton>
      </form>
    </main>
  );
}
