import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";

/**
 * How an app authenticates, as data: the server needs no code per app to
 * connect an account, refresh its token or hand its fields to `$auth`.
 */
export type AppAuth = OAuthAppAuth | KeysAppAuth | { type: "none" };

export interface OAuthAppAuth {
  type: "oauth";
  authorizeUrl: string;
  tokenUrl: string;
  /** Asked for when an account is connected. */
  scopes: string[];
  /** How the provider wants scopes joined in the authorize URL (a space by RFC 6749; Slack and Linear take commas). */
  scopeSeparator: string;
  /** Whether to send a PKCE S256 challenge (RFC 7636). */
  pkce: boolean;
  /** How the client authenticates at the token endpoint: form fields (`body`) or HTTP Basic (`basic`, RFC 6749 2.3.1). */
  clientAuth: "body" | "basic";
  /** Where the app's API takes the token: an `Authorization: Bearer` header (nearly all) or a query parameter. Informative: app code sends it. */
  tokenPlacement: "header" | "query";
  /** Extra parameters of the authorize URL (Google's access_type=offline, Dropbox's token_access_type=offline). */
  authorizeParams: Record<string, string>;
}

export interface KeysAppAuth {
  type: "keys";
  fields: KeyField[];
}

/** A named field of a key-based app's account, as `this.<app>.$auth.<name>` gives it. */
export interface KeyField {
  name: string;
  label: string;
  /** Secret fields are never shown back (all fields are sealed at rest alike). */
  secret: boolean;
  optional: boolean;
}

export interface AppDefinition {
  /** The app's name slug, as components name it (`app: "github"`). */
  slug: string;
  name: string;
  auth: AppAuth;
  /** Shipped with Runnel (true), or added by an admin through the API. */
  shipped: boolean;
}

/** The `$auth` fields an OAuth account gives user code (the names existing components read). */
export const OAUTH_AUTH_FIELDS = ["oauth_access_token", "oauth_refresh_token", "oauth_uid"] as const;

const SLUG = /^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$/;
const FIELD_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_NAME_LENGTH = 100;
const MAX_FIELDS = 20;
const MAX_SCOPES = 50;

export function isValidAppSlug(slug: string): boolean {
  return SLUG.test(slug);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(body: Record<string, unknown>, name: string, field: string, rule: string, max = 2048): string {
  const value = body[name];
  if (typeof value !== "string" || value.trim() === "" || value.length > max) throw new ValidationError(field, `${field} must be ${rule}; got ${describeValue(value)}.`);
  return value.trim();
}

function httpUrl(body: Record<string, unknown>, name: string, field: string): string {
  const value = text(body, name, field, "an http(s) URL");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError(field, `${field} must be an http(s) URL like https://auth.example.com/oauth/authorize; got ${describeValue(value)}.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new ValidationError(field, `${field} must use http or https; got ${url.protocol}.`);
  return url.toString();
}

/** The body of `POST /v1/apps`, checked: the definition and, for OAuth, the client to connect with. */
export interface AppInput {
  definition: AppDefinition;
  client: { clientId: string; clientSecret: string } | null;
}

export function checkAppInput(body: unknown): AppInput {
  if (!isRecord(body)) throw new ValidationError("body", `The body must be an object { app, name, auth }; got ${describeValue(body)}.`);
  const slug = text(body, "app", "app", "the app's name slug (lower-case letters, digits, - and _, like my-crm)", 64);
  if (!isValidAppSlug(slug)) throw new ValidationError("app", `app must be lower-case letters, digits, - and _, starting and ending with a letter or digit (like my-crm); got ${JSON.stringify(slug)}.`);
  const name = text(body, "name", "name", `the app's display name (at most ${MAX_NAME_LENGTH} characters)`, MAX_NAME_LENGTH);
  const auth = body.auth;
  if (!isRecord(auth)) throw new ValidationError("auth", `auth must be an object: { "type": "oauth", … } or { "type": "keys", "fields": […] }; got ${describeValue(auth)}.`);
  if (auth.type === "oauth") return checkOAuthInput(slug, name, auth);
  if (auth.type === "keys") return { definition: { slug, name, auth: { type: "keys", fields: checkKeyFields(auth.fields) }, shipped: false }, client: null };
  if (auth.type === "none") return { definition: { slug, name, auth: { type: "none" }, shipped: false }, client: null };
  throw new ValidationError("auth.type", `auth.type must be "oauth", "keys" or "none"; got ${describeValue(auth.type)}.`);
}

function checkOAuthInput(slug: string, name: string, auth: Record<string, unknown>): AppInput {
  const scopes = auth.scopes ?? [];
  if (!Array.isArray(scopes) || scopes.length > MAX_SCOPES || !scopes.every((scope) => typeof scope === "string" && scope.length > 0 && !/\s/.test(scope))) {
    throw new ValidationError("auth.scopes", `auth.scopes must be a list of at most ${MAX_SCOPES} scope names without spaces; got ${describeValue(scopes)}.`);
  }
  const pkce = auth.pkce ?? true;
  if (typeof pkce !== "boolean") throw new ValidationError("auth.pkce", `auth.pkce must be true or false; got ${describeValue(pkce)}.`);
  const clientAuth = auth.client_auth ?? "body";
  if (clientAuth !== "body" && clientAuth !== "basic") throw new ValidationError("auth.client_auth", `auth.client_auth must be "body" or "basic"; got ${describeValue(clientAuth)}.`);
  const authorizeParams = auth.authorize_params ?? {};
  if (!isRecord(authorizeParams) || !Object.values(authorizeParams).every((value) => typeof value === "string")) {
    throw new ValidationError("auth.authorize_params", `auth.authorize_params must be an object of text values (like { "prompt": "consent" }); got ${describeValue(authorizeParams)}.`);
  }
  const definition: AppDefinition = {
    slug,
    name,
    shipped: false,
    auth: {
      type: "oauth",
      authorizeUrl: httpUrl(auth, "authorize_url", "auth.authorize_url"),
      tokenUrl: httpUrl(auth, "token_url", "auth.token_url"),
      scopes: scopes as string[],
      scopeSeparator: " ",
      pkce,
      clientAuth,
      tokenPlacement: "header",
      authorizeParams: authorizeParams as Record<string, string>,
    },
  };
  const hasClient = auth.client_id !== undefined || auth.client_secret !== undefined;
  return { definition, client: hasClient ? checkClientInput(auth, "auth.") : null };
}

/** `{ client_id, client_secret }` of an OAuth app (PUT /v1/apps/<slug>/oauth_client, or inside POST /v1/apps's auth). */
export function checkClientInput(body: unknown, prefix = ""): { clientId: string; clientSecret: string } {
  if (!isRecord(body)) throw new ValidationError("body", `The body must be an object { client_id, client_secret }; got ${describeValue(body)}.`);
  return {
    clientId: text(body, "client_id", `${prefix}client_id`, "the client id the provider gave you"),
    clientSecret: text(body, "client_secret", `${prefix}client_secret`, "the client secret the provider gave you"),
  };
}

function checkKeyFields(fields: unknown): KeyField[] {
  if (!Array.isArray(fields) || fields.length === 0 || fields.length > MAX_FIELDS) {
    throw new ValidationError("auth.fields", `auth.fields must list 1 to ${MAX_FIELDS} fields like { "name": "api_key", "label": "API key", "secret": true }; got ${describeValue(fields)}.`);
  }
  const seen = new Set<string>();
  return fields.map((field, index) => {
    const where = `auth.fields[${index}]`;
    if (!isRecord(field)) throw new ValidationError(where, `${where} must be an object { name, label, secret }; got ${describeValue(field)}.`);
    const name = text(field, "name", `${where}.name`, "a field name (lower-case letters, digits and _, like api_key)", 64);
    if (!FIELD_NAME.test(name)) throw new ValidationError(`${where}.name`, `${where}.name must be lower-case letters, digits and _, starting with a letter (like api_key); got ${JSON.stringify(name)}.`);
    if (seen.has(name)) throw new ValidationError(`${where}.name`, `The field "${name}" is listed twice.`);
    seen.add(name);
    const label = field.label === undefined ? name : text(field, "label", `${where}.label`, "a label to show", MAX_NAME_LENGTH);
    const secret = field.secret ?? true;
    const optional = field.optional ?? false;
    if (typeof secret !== "boolean") throw new ValidationError(`${where}.secret`, `${where}.secret must be true or false; got ${describeValue(secret)}.`);
    if (typeof optional !== "boolean") throw new ValidationError(`${where}.optional`, `${where}.optional must be true or false; got ${describeValue(optional)}.`);
    return { name, label, secret, optional };
  });
}

/** The most a key field's value may be: keys and tokens are far shorter. */
export const MAX_KEY_FIELD_LENGTH = 8192;

/**
 * The fields of a new key-based account, checked against the app's
 * definition: each required one given, no unknown one, all strings.
 * Errors name the field (`fields.api_key`).
 */
export function checkKeyAccountFields(app: AppDefinition & { auth: KeysAppAuth }, fields: unknown): Record<string, string> {
  if (!isRecord(fields)) {
    const expected = app.auth.fields.map((field) => field.name).join(", ");
    throw new ValidationError("fields", `fields must be an object of the ${app.name} account's fields (${expected}); got ${describeValue(fields)}.`);
  }
  const known = new Map(app.auth.fields.map((field) => [field.name, field]));
  for (const name of Object.keys(fields)) {
    if (!known.has(name)) throw new ValidationError(`fields.${name}`, `${app.name} accounts have no field "${name}"; their fields are: ${[...known.keys()].join(", ")}.`);
  }
  const out: Record<string, string> = {};
  for (const field of app.auth.fields) {
    const value = fields[field.name];
    if (value === undefined || value === null || value === "") {
      if (field.optional) continue;
      throw new ValidationError(`fields.${field.name}`, `${field.label} (fields.${field.name}) is required to connect a ${app.name} account.`);
    }
    if (typeof value !== "string") throw new ValidationError(`fields.${field.name}`, `fields.${field.name} must be text; got ${field.secret ? "a " + typeof value : describeValue(value)}.`);
    if (value.length > MAX_KEY_FIELD_LENGTH) throw new ValidationError(`fields.${field.name}`, `fields.${field.name} is longer than ${MAX_KEY_FIELD_LENGTH} characters: is it the right value?`);
    out[field.name] = value;
  }
  return out;
}
