/**
 * The object user code sees as `this`: configured props, the component's
 * methods bound to it, `$emit`, db props, and `respond` on HTTP props. A new
 * one is built for every call, so nothing a call sets on `this` reaches the next.
 */
import { isAppDeclaration, type Component, type PropDeclaration } from "./component.js";
import type { RespondOptions } from "./active-call.js";
import { buildDataStoreProp, type StoreRequester } from "./data-store-prop.js";
import type { DbStore } from "./db-store.js";
import { buildHttpRequestProp } from "./http-request-prop.js";
import { resolveProp } from "./prop-definition.js";

export type Instance = Record<string, unknown>;

/** A call's account could not be given to it (the host's message says why); reported with the code AuthError. Not reachable from user code. */
export class AccountAuthError extends Error {
  override name = "AuthError";
}

export interface InstanceContext {
  /** Configured values by prop name. An app prop's value holds its `$auth`. */
  props: Record<string, unknown>;
  dbProps: string[];
  db: DbStore;
  emit(event: unknown, meta: unknown): void;
  /** `what` names the caller in errors: respond() by default, $.respond() in a step. */
  respond(response: unknown, what?: string, options?: RespondOptions): void;
  /** Asks the host to carry out a `data_store` prop's call. */
  storeRequest: StoreRequester;
  /** Asks the host to refresh a connected account (`$auth.refresh()`), answering its fields. */
  authRequest?: AuthRequester;
}

export type AuthRequester = (account: string, stale: string | null) => Promise<unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `this.<appProp>`: the app's methods bound to an object that also holds the
 * configured value's fields, so that app methods read `this.$auth`.
 */
export function buildAppInstance(app: PropDeclaration, configured: unknown, authRequest?: AuthRequester): Instance {
  const instance: Instance = { ...(isRecord(configured) ? configured : {}) };
  // The account's id stays in this closure: user code sees its fields only.
  const account = typeof instance.$account === "string" ? instance.$account : null;
  delete instance.$account;
  if (typeof instance.$authError === "string") {
    // The host could not give this run the account (revoked, deleted): the run fails saying so, before user code reads an empty $auth.
    throw new AccountAuthError(instance.$authError);
  }
  // A copy per call: calls of one batch share the props they were sent with, and refresh() replaces fields in place.
  instance.$auth = isRecord(instance.$auth) ? { ...instance.$auth } : {};
  addRefresh(instance.$auth as Record<string, unknown>, account, authRequest);
  const methods = isRecord(app.methods) ? app.methods : {};
  for (const [name, method] of Object.entries(methods)) {
    if (typeof method === "function") instance[name] = method.bind(instance);
  }
  return instance;
}

/**
 * `$auth.refresh()`, for app code whose API answered 401: the host refreshes
 * the account's token (once, however many calls ask at that moment) and the
 * fields of this `$auth` are replaced in place. Not enumerable, so that
 * `$auth` reads and serializes as the account's fields only.
 */
function addRefresh(auth: Record<string, unknown>, account: string | null, authRequest: AuthRequester | undefined): void {
  Object.defineProperty(auth, "refresh", {
    enumerable: false,
    value: async (): Promise<void> => {
      if (account === null || !authRequest) throw new AccountAuthError("$auth.refresh(): this app prop is not configured with a connected account.");
      const stale = typeof auth.oauth_access_token === "string" ? auth.oauth_access_token : null;
      const fields = await authRequest(account, stale);
      if (!isRecord(fields)) return;
      for (const key of Object.keys(auth)) delete auth[key];
      Object.assign(auth, fields);
    },
  });
}

/** The prop's type, from its app's propDefinition when it has one (`httpRequest: { propDefinition: [http, "httpRequest"] }`). */
function declaredType(name: string, prop: PropDeclaration): unknown {
  if (prop.propDefinition === undefined) return prop.type;
  try {
    return resolveProp(name, prop).declaration.type;
  } catch {
    // A broken reference was refused when the component was saved; here it is just not an http_request.
    return prop.type;
  }
}

export function buildInstance(component: Component, context: InstanceContext): Instance {
  // Props configured but not declared (from additionalProps) are read the same way.
  const instance: Instance = { ...context.props };
  for (const [name, prop] of Object.entries(component.props)) {
    if (isAppDeclaration(prop)) {
      instance[name] = buildAppInstance(prop, context.props[name], context.authRequest);
    } else if (prop.type === "$.interface.http") {
      const configured = context.props[name];
      const platformAnswers = prop.customResponse !== true;
      instance[name] = { ...(isRecord(configured) ? configured : {}), respond: (response: unknown) => context.respond(response, "respond()", { platformAnswers }) };
    } else {
      const type = declaredType(name, prop);
      if (type === "http_request") instance[name] = buildHttpRequestProp(name, context.props[name]);
      else if (type === "data_store") instance[name] = buildDataStoreProp(name, context.props[name], context.storeRequest);
    }
  }
  for (const name of context.dbProps) instance[name] = context.db.handle(name);
  for (const [name, method] of Object.entries(component.methods)) instance[name] = method.bind(instance);
  instance.$emit = (event: unknown, meta?: unknown) => context.emit(event, meta);
  return instance;
}
