import { Link } from "@tanstack/react-router";

/** The sections of the console, in the order a user meets them. */
const SECTIONS = [
  { to: "/", label: "Home", exact: true },
  { to: "/sources", label: "Sources", exact: false },
  { to: "/workflows", label: "Workflows", exact: false },
  { to: "/errors", label: "Errors", exact: false },
  { to: "/subscriptions", label: "Subscriptions", exact: false },
  { to: "/accounts", label: "Accounts", exact: false },
  { to: "/settings", label: "Settings", exact: false },
] as const;

export function Nav({ open }: { open: boolean }) {
  return (
    <nav id="main-nav" className={open ? "nav open" : "nav"} aria-label="Main">
      <ul>
        {SECTIONS.map((section) => (
          <li key={section.to}>
            <Link to={section.to} activeOptions={{ exact: section.exact }} activeProps={{ className: "active", "aria-current": "page" }}>
              {section.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
