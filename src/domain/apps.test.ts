import { describe, expect, it } from "vitest";
import { validationFieldOf as fieldOf } from "../../test/helpers/validation.js";
import { checkAppInput, checkKeyAccountFields, isValidAppSlug, type AppDefinition, type KeysAppAuth } from "./apps.js";
import { SHIPPED_APPS } from "./shipped-apps.js";

describe("the shipped apps", () => {
  it("have unique valid slugs, https URLs, and named key fields", () => {
    const slugs = SHIPPED_APPS.map((app) => app.slug);
    expect(new Set(slugs).size).toBe(slugs.length);
    for (const app of SHIPPED_APPS) {
      expect(isValidAppSlug(app.slug), app.slug).toBe(true);
      if (app.auth.type === "oauth") {
        expect(new URL(app.auth.authorizeUrl).protocol, app.slug).toBe("https:");
        expect(new URL(app.auth.tokenUrl).protocol, app.slug).toBe("https:");
      }
      if (app.auth.type === "keys") expect(app.auth.fields.some((field) => field.secret), app.slug).toBe(true);
    }
  });
});

describe("checkAppInput", () => {
  it("takes an OAuth app with its client, and a keys app with its fields", () => {
    const oauth = checkAppInput({ app: "my-idp", name: "My IdP", auth: { type: "oauth", authorize_url: "https://id.example.com/auth", token_url: "https://id.example.com/token", scopes: ["a", "b"], client_id: "c", client_secret: "s", authorize_params: { prompt: "consent" } } });
    expect(oauth.definition.auth).toMatchObject({ type: "oauth", pkce: true, clientAuth: "body", scopes: ["a", "b"], authorizeParams: { prompt: "consent" } });
    expect(oauth.client).toEqual({ clientId: "c", clientSecret: "s" });
    const keys = checkAppInput({ app: "crm", name: "CRM", auth: { type: "keys", fields: [{ name: "api_key" }, { name: "region", label: "Region", secret: false, optional: true }] } });
    expect(keys.definition.auth).toEqual({ type: "keys", fields: [{ name: "api_key", label: "api_key", secret: true, optional: false }, { name: "region", label: "Region", secret: false, optional: true }] });
  });

  it.each<[string, unknown, string]>([
    ["a slug with capitals", { app: "MyApp", name: "x", auth: { type: "none" } }, "app"],
    ["an unknown auth type", { app: "x", name: "x", auth: { type: "saml" } }, "auth.type"],
    ["an authorize URL that is not http", { app: "x", name: "x", auth: { type: "oauth", authorize_url: "ftp://x", token_url: "https://x/t" } }, "auth.authorize_url"],
    ["a scope with a space", { app: "x", name: "x", auth: { type: "oauth", authorize_url: "https://x/a", token_url: "https://x/t", scopes: ["a b"] } }, "auth.scopes"],
    ["a client id without its secret", { app: "x", name: "x", auth: { type: "oauth", authorize_url: "https://x/a", token_url: "https://x/t", client_id: "c" } }, "auth.client_secret"],
    ["a field listed twice", { app: "x", name: "x", auth: { type: "keys", fields: [{ name: "k" }, { name: "k" }] } }, "auth.fields[1].name"],
    ["no fields", { app: "x", name: "x", auth: { type: "keys", fields: [] } }, "auth.fields"],
  ])("refuses %s, naming the field", (_rule, body, field) => {
    expect(fieldOf(() => checkAppInput(body))).toBe(field);
  });
});

describe("checkKeyAccountFields", () => {
  const twilio = SHIPPED_APPS.find((app) => app.slug === "twilio") as AppDefinition & { auth: KeysAppAuth };
  it("takes the app's fields and names the one missing, unknown or not text, never showing a secret", () => {
    expect(checkKeyAccountFields(twilio, { AccountSid: "AC1", Sid: "SK1", Secret: "t" })).toEqual({ AccountSid: "AC1", Sid: "SK1", Secret: "t" });
    expect(fieldOf(() => checkKeyAccountFields(twilio, { AccountSid: "AC1", Sid: "SK1" }))).toBe("fields.Secret");
    expect(fieldOf(() => checkKeyAccountFields(twilio, { AccountSid: "AC1", Sid: "SK1", Secret: "t", token: "x" }))).toBe("fields.token");
    expect(() => checkKeyAccountFields(twilio, { AccountSid: "AC1", Sid: "SK1", Secret: 12345 })).toThrow(/fields\.Secret must be text; got a number\./);
  });
});
