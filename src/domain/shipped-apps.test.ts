import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exchangeCode, refreshTokens, TokenRequestError } from "../engine/apps/oauth-token-client.js";
import type { AppDefinition, KeysAppAuth, OAuthAppAuth } from "./apps.js";
import { SHIPPED_APPS } from "./shipped-apps.js";

/**
 * The shipped apps against what each provider's documentation says
 * (docs/apps.md has the pages), and each provider's documented token answer
 * read by the real token client, sent to a loopback endpoint that records
 * how the client authenticated.
 */

function oauthApp(slug: string): AppDefinition & { auth: OAuthAppAuth } {
  const app = SHIPPED_APPS.find((candidate) => candidate.slug === slug);
  if (!app || app.auth.type !== "oauth") throw new Error(`no shipped OAuth app ${slug}`);
  return app as AppDefinition & { auth: OAuthAppAuth };
}

function keysApp(slug: string): AppDefinition & { auth: KeysAppAuth } {
  const app = SHIPPED_APPS.find((candidate) => candidate.slug === slug);
  if (!app || app.auth.type !== "keys") throw new Error(`no shipped keys app ${slug}`);
  return app as AppDefinition & { auth: KeysAppAuth };
}

describe("the shipped OAuth apps say what their providers document", () => {
  it.each<[string, Pick<OAuthAppAuth, "authorizeUrl" | "tokenUrl" | "scopeSeparator" | "pkce" | "clientAuth"> & { authorizeParams?: Record<string, string> }]>([
    ["github", { authorizeUrl: "https://github.com/login/oauth/authorize", tokenUrl: "https://github.com/login/oauth/access_token", scopeSeparator: " ", pkce: true, clientAuth: "body" }],
    ["gitlab", { authorizeUrl: "https://gitlab.com/oauth/authorize", tokenUrl: "https://gitlab.com/oauth/token", scopeSeparator: " ", pkce: true, clientAuth: "body" }],
    ["slack", { authorizeUrl: "https://slack.com/oauth/v2/authorize", tokenUrl: "https://slack.com/api/oauth.v2.access", scopeSeparator: ",", pkce: false, clientAuth: "basic" }],
    ["google", { authorizeUrl: "https://accounts.google.com/o/oauth2/v2/auth", tokenUrl: "https://oauth2.googleapis.com/token", scopeSeparator: " ", pkce: true, clientAuth: "body", authorizeParams: { access_type: "offline", prompt: "consent" } }],
    ["microsoft", { authorizeUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize", tokenUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/token", scopeSeparator: " ", pkce: true, clientAuth: "body" }],
    ["notion", { authorizeUrl: "https://api.notion.com/v1/oauth/authorize", tokenUrl: "https://api.notion.com/v1/oauth/token", scopeSeparator: " ", pkce: false, clientAuth: "basic", authorizeParams: { owner: "user" } }],
    ["discord", { authorizeUrl: "https://discord.com/oauth2/authorize", tokenUrl: "https://discord.com/api/oauth2/token", scopeSeparator: " ", pkce: true, clientAuth: "body" }],
    ["airtable", { authorizeUrl: "https://airtable.com/oauth2/v1/authorize", tokenUrl: "https://airtable.com/oauth2/v1/token", scopeSeparator: " ", pkce: true, clientAuth: "basic" }],
    ["hubspot", { authorizeUrl: "https://app.hubspot.com/oauth/authorize", tokenUrl: "https://api.hubapi.com/oauth/2026-03/token", scopeSeparator: " ", pkce: false, clientAuth: "body" }],
    ["linear", { authorizeUrl: "https://linear.app/oauth/authorize", tokenUrl: "https://api.linear.app/oauth/token", scopeSeparator: ",", pkce: true, clientAuth: "body" }],
    ["dropbox", { authorizeUrl: "https://www.dropbox.com/oauth2/authorize", tokenUrl: "https://api.dropboxapi.com/oauth2/token", scopeSeparator: " ", pkce: true, clientAuth: "body", authorizeParams: { token_access_type: "offline" } }],
  ])("%s", (slug, documented) => {
    const { auth } = oauthApp(slug);
    expect(auth).toMatchObject({ ...documented, authorizeParams: documented.authorizeParams ?? {}, tokenPlacement: "header" });
  });

  it("ask for a refresh token the way each provider wants it, and Notion for no scope", () => {
    expect(oauthApp("microsoft").auth.scopes).toContain("offline_access");
    expect(oauthApp("google").auth.authorizeParams.access_type).toBe("offline");
    expect(oauthApp("dropbox").auth.authorizeParams.token_access_type).toBe("offline");
    // Notion grants per page, not per scope: its page lists none.
    expect(oauthApp("notion").auth.scopes).toEqual([]);
  });
});

describe("the shipped key apps name the fields their providers' requests need", () => {
  it.each<[string, Array<{ name: string; secret: boolean; optional: boolean }>]>([
    ["stripe", [{ name: "api_key", secret: true, optional: false }]],
    [
      "openai",
      [
        { name: "api_key", secret: true, optional: false },
        { name: "organization", secret: false, optional: true },
        { name: "project", secret: false, optional: true },
      ],
    ],
    ["anthropic", [{ name: "api_key", secret: true, optional: false }]],
    [
      "twilio",
      [
        { name: "AccountSid", secret: false, optional: false },
        { name: "Sid", secret: false, optional: false },
        { name: "Secret", secret: true, optional: false },
      ],
    ],
    ["sendgrid", [{ name: "api_key", secret: true, optional: false }]],
    ["telegram_bot_api", [{ name: "token", secret: true, optional: false }]],
  ])("%s", (slug, fields) => {
    expect(keysApp(slug).auth.fields.map(({ name, secret, optional }) => ({ name, secret, optional }))).toEqual(fields);
  });
});

/** What the loopback token endpoint saw of the last request. */
interface SeenRequest {
  authorization: string | undefined;
  contentType: string | undefined;
  form: URLSearchParams;
}

let endpoint: Server;
let endpointUrl: string;
let seen: SeenRequest | null = null;
let answer: { status: number; body: string } = { status: 200, body: "{}" };

beforeAll(async () => {
  endpoint = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      seen = { authorization: request.headers.authorization, contentType: request.headers["content-type"], form: new URLSearchParams(body) };
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
  endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/token`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => endpoint.close(() => resolve()));
});

const CLIENT = { clientId: "runnel-client", clientSecret: "s3cret/with+chars" };
const NOW = 1_800_000_000_000;
const VERIFIER = "v".repeat(64);

/** The app as shipped, its token endpoint moved to loopback: everything else (client auth, PKCE) as the provider gets it. */
function onLoopback(slug: string): OAuthAppAuth {
  return { ...oauthApp(slug).auth, tokenUrl: endpointUrl };
}

function expectClientAuthenticatedAs(auth: OAuthAppAuth, request: SeenRequest): void {
  expect(request.contentType).toBe("application/x-www-form-urlencoded");
  if (auth.clientAuth === "basic") {
    const encoded = `${encodeURIComponent(CLIENT.clientId)}:${encodeURIComponent(CLIENT.clientSecret)}`;
    expect(request.authorization).toBe(`Basic ${Buffer.from(encoded).toString("base64")}`);
    expect(request.form.has("client_secret")).toBe(false);
  } else {
    expect(request.authorization).toBeUndefined();
    expect(request.form.get("client_id")).toBe(CLIENT.clientId);
    expect(request.form.get("client_secret")).toBe(CLIENT.clientSecret);
  }
}

/**
 * Each provider's token answer, in the shape its documentation shows
 * (values made up); and what `$auth` should get from it.
 */
const ANSWERS: Array<[string, Record<string, unknown>, { access: string; refresh?: string; uid?: string; expiresIn?: number }]> = [
  ["github", { access_token: "gho_16C7e42F292c6912E7710c838347Ae178B4a", scope: "repo,read:user", token_type: "bearer" }, { access: "gho_16C7e42F292c6912E7710c838347Ae178B4a" }],
  ["gitlab", { access_token: "de6780bc50", token_type: "Bearer", expires_in: 7200, refresh_token: "8257e65c97", created_at: 1607635748 }, { access: "de6780bc50", refresh: "8257e65c97", expiresIn: 7200 }],
  [
    "slack",
    {
      ok: true,
      access_token: "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
      token_type: "bot",
      scope: "chat:write,channels:read",
      bot_user_id: "U0KRQLJ9H",
      app_id: "A0KRD7HC3",
      team: { id: "T9TK3CUKW", name: "Slack Softball Team" },
      authed_user: { id: "U1234", scope: "chat:write", access_token: "xoxp-1234", token_type: "user" },
    },
    { access: "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy", uid: "U1234" },
  ],
  ["google", { access_token: "ya29.a0Af", expires_in: 3599, refresh_token: "1//0gdSR", scope: "openid email profile", token_type: "Bearer", id_token: "eyJ.x.y" }, { access: "ya29.a0Af", refresh: "1//0gdSR", expiresIn: 3599 }],
  ["microsoft", { token_type: "Bearer", scope: "User.Read offline_access", expires_in: 3599, ext_expires_in: 3599, access_token: "eyJ0eXAi", refresh_token: "AwABAAAA" }, { access: "eyJ0eXAi", refresh: "AwABAAAA", expiresIn: 3599 }],
  [
    "notion",
    {
      access_token: "ntn_abc",
      token_type: "bearer",
      refresh_token: "nrt_def",
      bot_id: "3c90c3cc-0d44-4b50-8888-8dd25736052a",
      workspace_id: "3c90c3cc-0d44-4b50-8888-8dd25736052b",
      workspace_name: "Acme",
      owner: { type: "user", user: { object: "user", id: "6794760a-1f15-45cd-9c65-0dfe42f5135a", type: "person", person: { email: "a@example.com" } } },
    },
    { access: "ntn_abc", refresh: "nrt_def", uid: "6794760a-1f15-45cd-9c65-0dfe42f5135a" },
  ],
  ["discord", { access_token: "6qrZcUqja7812RVdnEKjpzOL4CvHBFG", token_type: "Bearer", expires_in: 604800, refresh_token: "D43f5y0ahjqew82jZ4NViEr2YafMKhue", scope: "identify guilds" }, { access: "6qrZcUqja7812RVdnEKjpzOL4CvHBFG", refresh: "D43f5y0ahjqew82jZ4NViEr2YafMKhue", expiresIn: 604800 }],
  ["airtable", { access_token: "oaa.x", refresh_token: "oar.y", token_type: "Bearer", scope: "data.records:read", expires_in: 3600, refresh_expires_in: 5184000 }, { access: "oaa.x", refresh: "oar.y", expiresIn: 3600 }],
  ["hubspot", { token_type: "bearer", refresh_token: "na1-ab12-cd34", access_token: "CKDZpunPLh", expires_in: 1800, hub_id: 62515, user_id: 123, scopes: ["oauth", "crm.objects.contacts.read"] }, { access: "CKDZpunPLh", refresh: "na1-ab12-cd34", uid: "123", expiresIn: 1800 }],
  ["linear", { access_token: "lin_oauth_00a21d8b", token_type: "Bearer", expires_in: 86399, scope: "read write", refresh_token: "lin_refresh_1" }, { access: "lin_oauth_00a21d8b", refresh: "lin_refresh_1", expiresIn: 86399 }],
  ["dropbox", { access_token: "sl.u.AbX9y6", expires_in: 14400, token_type: "bearer", scope: "account_info.read files.metadata.read", refresh_token: "nBiM85CZ", account_id: "dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc" }, { access: "sl.u.AbX9y6", refresh: "nBiM85CZ", uid: "dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc", expiresIn: 14400 }],
];

describe("each provider's documented token answer, read by the token client", () => {
  it("covers every shipped OAuth app", () => {
    const oauthSlugs = SHIPPED_APPS.filter((app) => app.auth.type === "oauth").map((app) => app.slug);
    expect(ANSWERS.map(([slug]) => slug).sort()).toEqual(oauthSlugs.sort());
  });

  it.each(ANSWERS)("%s: the client authenticates as documented and $auth gets the token", async (slug, body, expected) => {
    const auth = onLoopback(slug);
    answer = { status: 200, body: JSON.stringify(body) };
    seen = null;
    // As the accounts service does: a verifier only for apps that send a PKCE challenge.
    const grant = await exchangeCode({ auth, client: CLIENT, policy: null, now: NOW }, "the-code", "https://runnel.example.com/oauth/callback", auth.pkce ? VERIFIER : null);

    const request = seen as SeenRequest | null;
    if (!request) throw new Error("the token endpoint was not called");
    expectClientAuthenticatedAs(auth, request);
    expect(request.form.get("grant_type")).toBe("authorization_code");
    expect(request.form.get("code")).toBe("the-code");
    expect(request.form.get("redirect_uri")).toBe("https://runnel.example.com/oauth/callback");
    expect(request.form.get("code_verifier")).toBe(auth.pkce ? VERIFIER : null);

    const tokens: Record<string, string> = { oauth_access_token: expected.access };
    if (expected.refresh) tokens.oauth_refresh_token = expected.refresh;
    if (expected.uid) tokens.oauth_uid = expected.uid;
    expect(grant.tokens).toEqual(tokens);
    expect(grant.expiresAt).toBe(expected.expiresIn === undefined ? null : NOW + expected.expiresIn * 1000);
  });

  it("refreshes as each provider with refresh tokens documents, keeping the old refresh token when none comes back", async () => {
    for (const [slug, body, expected] of ANSWERS) {
      if (!expected.refresh) continue;
      const auth = onLoopback(slug);
      answer = { status: 200, body: JSON.stringify({ ...body, access_token: "renewed", refresh_token: undefined }) };
      seen = null;
      const grant = await refreshTokens({ auth, client: CLIENT, policy: null, now: NOW }, expected.refresh);
      const request = seen as SeenRequest | null;
      if (!request) throw new Error(`${slug}: the token endpoint was not called`);
      expectClientAuthenticatedAs(auth, request);
      expect(request.form.get("grant_type"), slug).toBe("refresh_token");
      expect(request.form.get("refresh_token"), slug).toBe(expected.refresh);
      expect(grant.tokens.oauth_access_token, slug).toBe("renewed");
      expect(grant.tokens.oauth_refresh_token, slug).toBe(expected.refresh);
    }
  });

  it("takes Slack's refusal, which comes with HTTP 200 and ok: false, as a refusal", async () => {
    answer = { status: 200, body: JSON.stringify({ ok: false, error: "invalid_code" }) };
    const refused = await exchangeCode({ auth: onLoopback("slack"), client: CLIENT, policy: null, now: NOW }, "used-code", "https://runnel.example.com/oauth/callback", null).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TokenRequestError);
    expect((refused as TokenRequestError).oauthError).toBe("invalid_code");
    expect((refused as TokenRequestError).message).toBe("the provider answered 200 invalid_code");
  });

  it("takes HubSpot's and Notion's invalid_grant on a revoked refresh token as a dead grant", async () => {
    for (const slug of ["hubspot", "notion"]) {
      answer = { status: 400, body: JSON.stringify({ error: "invalid_grant", error_description: "refresh token is invalid, expired or revoked" }) };
      const refused = await refreshTokens({ auth: onLoopback(slug), client: CLIENT, policy: null, now: NOW }, "revoked").catch((error: unknown) => error);
      expect(refused, slug).toBeInstanceOf(TokenRequestError);
      expect((refused as TokenRequestError).grantRevoked, slug).toBe(true);
    }
  });
});
