import { queryOptions } from "@tanstack/react-query";
import { api, apiData } from "../api/client";
import { queryClient } from "../api/query-client";
import type { SessionView, UserView } from "../api/types";

/** Who is signed in: GET /v1/users/me with the session cookie; a 401 means nobody. */
export const meQuery = queryOptions({
  queryKey: ["users", "me"],
  queryFn: ({ signal }) => apiData<UserView>("GET", "/v1/users/me", { signal }),
  staleTime: 60_000,
});

/** Exchanges an API key (or a sign-in link's token) for a session cookie; the key is not kept anywhere. */
export async function signIn(credentials: { api_key: string } | { sign_in_token: string }): Promise<SessionView> {
  const session = await apiData<SessionView>("POST", "/v1/sessions", { body: credentials });
  queryClient.clear();
  queryClient.setQueryData(meQuery.queryKey, session.user);
  return session;
}

/** Ends the session on the server (the cookie is cleared by the answer) and forgets everything cached. */
export async function signOut(): Promise<void> {
  try {
    await api<void>("DELETE", "/v1/sessions/current");
  } finally {
    queryClient.clear();
  }
}
