import { useMutation, useQuery } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { meQuery, signOut } from "../auth/session";
import { ErrorMessage } from "../components/ErrorMessage";
import { PendingButton } from "../components/PendingButton";

export function TopBar({ menuOpen, onToggleMenu }: { menuOpen: boolean; onToggleMenu: () => void }) {
  const me = useQuery(meQuery);
  const navigate = useNavigate();
  const signOutMutation = useMutation({
    mutationFn: signOut,
    onSuccess: () => void navigate({ to: "/sign-in", replace: true }),
  });

  return (
    <header className="top-bar">
      <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={onToggleMenu}>
        <span aria-hidden="true">☰</span> Menu
      </button>
      <Link to="/" className="brand">
        Runnel
      </Link>
      <div className="top-bar-user">
        {me.data ? (
          <span className="user-name" title={me.data.email ?? undefined}>
            {me.data.username}
            {me.data.is_admin ? <span className="badge">admin</span> : null}
          </span>
        ) : null}
        <PendingButton type="button" pending={signOutMutation.isPending} pendingText="Signing out…" onClick={() => signOutMutation.mutate()}>
          Sign out
        </PendingButton>
      </div>
      {signOutMutation.error ? <ErrorMessage error={signOutMutation.error} /> : null}
    </header>
  );
}
