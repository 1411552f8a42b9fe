import type { ValidatedComponent } from "../../domain/component-rules.js";
import type { DeployedSource, TimerSchedule } from "../../domain/sources.js";
import { isSealed, SECRET_MASK, type SecretBox } from "../secrets.js";

/** Encrypts the values of secret props before they are stored. */
export function sealSecrets(component: ValidatedComponent, values: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  const out = { ...values };
  for (const prop of component.props) {
    const value = out[prop.name];
    if (prop.secret && typeof value === "string" && !isSealed(value)) out[prop.name] = box.seal(value);
  }
  return out;
}

/**
 * A workflow step's props as stored: each string value of a secret prop
 * sealed (expressions too: a secret prop's text is nobody's business). A
 * secret left out, or sent back as the mask or as the sealed value it has,
 * keeps what is stored; any other value is new and sealed, so a client can
 * never slip in a "sealed" value of its own.
 */
export function sealStepSecrets(component: ValidatedComponent, given: Record<string, unknown>, stored: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  const out = { ...given };
  for (const prop of component.props) {
    if (!prop.secret) continue;
    const value = out[prop.name];
    const kept = stored[prop.name];
    if (value === undefined || value === SECRET_MASK || (isSealed(kept) && value === kept)) {
      if (isSealed(kept)) out[prop.name] = kept;
      else delete out[prop.name];
      continue;
    }
    if (typeof value === "string") out[prop.name] = box.seal(value);
  }
  return out;
}

/** The stored values with secrets decrypted, for re-validation on update and for runs. */
export function openSecrets(values: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) out[name] = isSealed(value) ? box.open(value) : value;
  return out;
}

/**
 * An update's props with each secret it leaves out kept as stored: the API
 * never shows secrets back, so a client cannot send them again.
 */
export function withKeptSecrets(
  component: ValidatedComponent,
  given: Record<string, unknown>,
  stored: Record<string, unknown>,
  box: SecretBox,
): Record<string, unknown> {
  const out = { ...given };
  for (const prop of component.props) {
    const kept = stored[prop.name];
    if (prop.secret && !Object.hasOwn(given, prop.name) && isSealed(kept)) out[prop.name] = box.open(kept);
  }
  return out;
}

export interface RuntimeProps {
  props: Record<string, unknown>;
  dbProps: string[];
  /** The data stores the source's `data_store` props name: the only ones its calls may reach. */
  dataStores: string[];
}

/** What `this.<prop>` holds in a run: configured values, the HTTP endpoint, the timer, db stores, apps. */
export function runtimeProps(component: ValidatedComponent, source: DeployedSource, box: SecretBox, endpointUrl: string | null): RuntimeProps {
  const configured = openSecrets(source.configuredProps, box);
  const props: Record<string, unknown> = {};
  const dbProps: string[] = [];
  for (const prop of component.props) {
    switch (prop.baseType) {
      case "$.service.db":
        dbProps.push(prop.name);
        break;
      case "$.interface.http":
        props[prop.name] = { endpoint: endpointUrl };
        break;
      case "app":
        // The configured account ({ authProvisionId }) stays until the run's caller swaps it for its $auth (AccountAuth.resolveProps).
        props[prop.name] = configured[prop.name] ?? { $auth: {} };
        break;
      default:
        if (configured[prop.name] !== undefined) props[prop.name] = configured[prop.name];
    }
  }
  for (const [name, value] of Object.entries(configured)) {
    if (!(name in props) && !dbProps.includes(name)) props[name] = value;
  }
  return { props, dbProps, dataStores: dataStoreNames(component, props) };
}

/**
 * The `configured_props` the API shows: values as configured, secrets left out,
 * a timer as `{cron, interval_seconds}` (and `timezone` when it has one) and an
 * HTTP interface as `{endpoint_url}`.
 */
export function publicConfiguredProps(component: ValidatedComponent, source: DeployedSource, endpointUrl: string | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const prop of component.props) {
    if (prop.baseType === "$.interface.http") {
      out[prop.name] = { endpoint_url: endpointUrl };
    } else if (prop.baseType === "$.interface.timer") {
      out[prop.name] = timerEcho(source.timer);
    } else if (!prop.secret && source.configuredProps[prop.name] !== undefined) {
      out[prop.name] = source.configuredProps[prop.name];
    }
  }
  for (const [name, value] of Object.entries(source.configuredProps)) {
    if (!(name in out) && !component.props.some((prop) => prop.name === name) && !isSealed(value)) out[name] = value;
  }
  return out;
}

/** A timer as the API shows it; the zone only when it has one, so a timer without keeps the shape it always had. */
export function timerEcho(timer: TimerSchedule | null): Record<string, unknown> {
  const echo: Record<string, unknown> = { cron: timer?.cron ?? null, interval_seconds: timer?.intervalSeconds ?? null };
  if (timer?.timezone !== undefined) echo.timezone = timer.timezone;
  return echo;
}

/** The store names that a component's `data_store` props are configured with (the props as the runner gets them). */
export function dataStoreNames(component: ValidatedComponent, props: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const prop of component.props) {
    const value = props[prop.name];
    if (prop.baseType === "data_store" && typeof value === "string") names.push(value);
  }
  return names;
}
