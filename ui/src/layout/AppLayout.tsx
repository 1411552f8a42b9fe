import { Outlet, useRouterState } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { Nav } from "./Nav";
import { TopBar } from "./TopBar";

/** The signed-in frame: top bar, navigation (behind a menu button on narrow screens) and the page. */
export function AppLayout() {
  const [menuOpen, setMenuOpen] = useState(false);
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  // Following a link closes the menu on a phone.
  useEffect(() => setMenuOpen(false), [pathname]);

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <TopBar menuOpen={menuOpen} onToggleMenu={() => setMenuOpen((open) => !open)} />
      <div className="app-body">
        <Nav open={menuOpen} />
        <main id="main" className="page" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}
