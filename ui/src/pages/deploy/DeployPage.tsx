import { useState } from "react";
import type { ComponentView } from "../../api/types";
import { ComponentPicker } from "./ComponentPicker";
import { DeployForm } from "./DeployForm";
import "./deploy.css";

export interface DeployPageProps {
  /** Pre-filled by a deploy URL: `/sources?action=create&key=<key>` or `…&url=<url>`. */
  initialKey?: string | undefined;
  initialUrl?: string | undefined;
}

/** Deploy a source: pick the component (step 1), then fill in its props and deploy (step 2). */
export function DeployPage({ initialKey, initialUrl }: DeployPageProps) {
  const [component, setComponent] = useState<ComponentView | null>(null);
  return (
    <section className="deploy-page" aria-labelledby="deploy-title">
      <h1 id="deploy-title">Deploy a source</h1>
      <ComponentPicker initialKey={initialKey} initialUrl={initialUrl} onLoaded={setComponent} />
      {/* Keyed: another component starts a fresh form (its own props, no leftover values). */}
      {component ? <DeployForm key={component.id} component={component} /> : null}
    </section>
  );
}
