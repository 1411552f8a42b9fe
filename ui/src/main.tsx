import { QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "@tanstack/react-router";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { onUnauthorized } from "./api/client";
import { queryClient } from "./api/query-client";
import { router } from "./routes/tree";
import "./styles/app.css";

// A 401 anywhere means the session is gone (signed out elsewhere, expired, its key revoked): back to sign-in.
onUnauthorized(() => {
  if (router.state.location.pathname === "/sign-in") return;
  queryClient.clear();
  void router.navigate({ to: "/sign-in", search: { next: router.state.location.href } });
});

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
