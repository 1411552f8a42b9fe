import { useQuery } from "@tanstack/react-query";
import { meQuery } from "../../auth/session";
import { ApiKeysSection } from "./ApiKeysSection";
import { EnvVarsSection } from "./EnvVarsSection";
import { InstallationSection } from "./InstallationSection";
import { OutboxSection } from "./OutboxSection";
import { RegistrySection } from "./RegistrySection";
import { UsersSection } from "./UsersSection";
import "./settings.css";

/** Your account and this server: API keys, environment variables, the outbox, users and the installation's processes (admins), published components. */
export function SettingsPage() {
  const me = useQuery(meQuery);
  const isAdmin = me.data?.is_admin === true;
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <nav aria-label="Settings sections" className="settings-nav">
        <a href="#api-keys-title">API keys</a>
        <a href="#env-title">Environment variables</a>
        <a href="#outbox-title">Outbox</a>
        {isAdmin ? <a href="#users-title">Users</a> : null}
        {isAdmin ? <a href="#installation-title">Installation</a> : null}
        <a href="#registry-title">Published components</a>
      </nav>
      <ApiKeysSection />
      <EnvVarsSection />
      <OutboxSection />
      {isAdmin ? <UsersSection /> : null}
      {isAdmin ? <InstallationSection /> : null}
      <RegistrySection />
    </section>
  );
}
