import type { ApiClient, ComponentView, SourceView } from "../client/api-client.js";
import { saveTarget, type ComponentTarget } from "./component-code.js";
import type { Io } from "./output.js";
import { withSpinner } from "./spinner.js";
import { askForMissingProps, configurablePropsOf, parsePropFlags } from "./props.js";

export interface DeployOptions {
  name?: string | undefined;
  /** `--prop key=value` flags as given. */
  propFlags: string[];
  /** `--json`: no spinner. */
  json?: boolean | undefined;
}

/**
 * Saves the component first to learn its props, asks for the required ones
 * the flags leave out, then deploys that saved component: the code travels once.
 */
export async function deploySource(client: ApiClient, io: Io, target: ComponentTarget, options: DeployOptions): Promise<SourceView> {
  // Saving bundles and checks the code, and installs its npm packages on the server: it may take a while.
  const component = await withSpinner(io, "Saving the component (npm packages are installed on the server)…", options, () => saveTarget(client, target));
  return deploySavedComponent(client, io, component, options);
}

export async function deploySavedComponent(client: ApiClient, io: Io, component: ComponentView, options: DeployOptions): Promise<SourceView> {
  // Checked before asking for props: answering questions for nothing wastes a person's time.
  if (component.type === "action") throw new Error(`"${component.name}" is an action, a workflow step: only sources can be deployed.`);
  const props = configurablePropsOf(component);
  const configured = await askForMissingProps(io, props, parsePropFlags(options.propFlags, props));
  return withSpinner(io, `Deploying ${component.name}…`, options, () =>
    client.deploySource({
      component_id: component.id,
      ...(options.name ? { name: options.name } : {}),
      configured_props: configured,
    }),
  );
}
