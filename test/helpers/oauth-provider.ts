/**
 * A real OAuth 2 authorization server on loopback (oidc-provider): the
 * authorization code flow with PKCE required, refresh tokens, and grants
 * that can be revoked; with a small protected API beside it that checks
 * the bearer token against the provider. Login and consent are granted at
 * once for the user the test names (no form to fill), as a person clicking
 * "Allow" would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface TestOAuthProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Refresh grants the token endpoint answered, successful or not. */
  refreshes: { ok: number; failed: number };
  /** Calls of the protected API, by the status they got. */
  apiCalls: { ok: number; unauthorized: number };
  /** The lifetime of access tokens issued from now on, in seconds. */
  setAccessTokenSeconds(seconds: number): void;
  /** How long the token endpoint waits before it answers, from now on: a slow provider, so that refreshes overlap. */
  setTokenDelayMs(ms: number): void;
  /** From now on the token endpoint answers this status (a provider having an outage) with `temporarily_unavailable`; null: it works again. */
  setTokenOutage(status: number | null): void;
  /** Requests the token endpoint got, the ones answered by an outage included. */
  tokenRequests(): number;
  /** Every access and refresh token the token endpoint gave out. */
  issuedTokens(): string[];
  /** Revokes every access token given out (the grants and refresh tokens stay): the API answers 401 until a refresh. */
  revokeAccessTokens(): Promise<void>;
  /** Revokes every grant made so far, as a user removing the app at the provider: their refresh tokens stop working. */
  revokeAll(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `rotateRefreshTokens`: every refresh gives a new refresh token and uses up
 * the one it was given (a second use is refused with invalid_grant, and
 * oidc-provider then revokes the grant), as many providers do.
 */
/** The body of `POST /v1/apps` that adds `provider` as an OAuth app (code + PKCE; consent asked, so that it issues refresh tokens). */
export function oauthAppBody(provider: TestOAuthProvider, app: string, name: string) {
  return {
    app,
    name,
    auth: {
      type: "oauth",
      authorize_url: `${provider.issuer}/auth`,
      token_url: `${provider.issuer}/token`,
      scopes: ["openid", "offline_access", "api"],
      pkce: true,
      // oidc-provider issues a refresh token for offline_access only when consent is asked for.
      authorize_params: { prompt: "consent" },
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
    },
  };
}

export async function startOAuthProvider(options: { redirectUri: string; subject?: string; rotateRefreshTokens?: boolean }): Promise<TestOAuthProvider> {
  const subject = options.subject ?? "user-1";
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const clientId = "runnel-test";
  const clientSecret = `cs-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  let accessTokenSeconds = 3600;
  let tokenDelayMs = 0;
  let outageStatus: number | null = null;
  let tokenRequestCount = 0;
  const grantIds: string[] = [];

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    pkce: { required: () => true },
    scopes: ["openid", "offline_access", "api"],
    features: { devInteractions: { enabled: false }, revocation: { enabled: true } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    ttl: { AccessToken: () => accessTokenSeconds, AuthorizationCode: 60, RefreshToken: 24 * 3600, Grant: 24 * 3600, Interaction: 600, Session: 3600, IdToken: 3600 },
    // By default refresh tokens stay the same across refreshes, so that a revoked grant is the only way one stops working.
    rotateRefreshToken: options.rotateRefreshTokens ?? false,
    cookies: { keys: ["test-cookie-key"] },
  } as any);

  const refreshes = { ok: 0, failed: 0 };
  provider.on("grant.success", (ctx: any) => {
    if (ctx.oidc.params?.grant_type === "refresh_token") refreshes.ok += 1;
  });
  provider.on("grant.error", (ctx: any) => {
    if (ctx.oidc.params?.grant_type === "refresh_token") refreshes.failed += 1;
  });
  const apiCalls = { ok: 0, unauthorized: 0 };
  const callback = provider.callback();

  http.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", issuer);
    if (url.pathname.startsWith("/interaction/")) return void interact(request, response);
    if (url.pathname === "/api/me") return void protectedApi(request, response);
    if (url.pathname !== "/token") return void callback(request, response);
    tokenRequestCount += 1;
    recordTokens(response);
    const answer = () => {
      if (outageStatus === null) return void callback(request, response);
      response.writeHead(outageStatus, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "temporarily_unavailable", error_description: "down for maintenance" }));
    };
    // The request's body stays buffered in its stream meanwhile.
    if (tokenDelayMs > 0) setTimeout(answer, tokenDelayMs);
    else answer();
  });

  const issued = new Set<string>();
  /** Reads the token endpoint's answers as they are sent, to know every token given out. */
  function recordTokens(response: ServerResponse): void {
    const chunks: Buffer[] = [];
    const write = response.write.bind(response) as (...args: unknown[]) => boolean;
    const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
    response.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (chunk) chunks.push(Buffer.from(chunk as string));
      return write(chunk, ...rest);
    }) as typeof response.write;
    response.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (chunk && typeof chunk !== "function") chunks.push(Buffer.from(chunk as string));
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        for (const name of ["access_token", "refresh_token"]) if (typeof body[name] === "string") issued.add(body[name] as string);
      } catch {
        // Not JSON: an error page, no token in it.
      }
      return end(chunk, ...rest);
    }) as typeof response.end;
  }

  async function interact(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const details = await provider.interactionDetails(request, response);
      if (details.prompt.name === "login") {
        await provider.interactionFinished(request, response, { login: { accountId: subject } }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
      grant.addOIDCScope(String(details.params.scope ?? ""));
      const grantId = await grant.save();
      grantIds.push(grantId);
      await provider.interactionFinished(request, response, { consent: { grantId } }, { mergeWithLastSubmission: true });
    } catch (error) {
      response.statusCode = 500;
      response.end(`interaction failed: ${(error as Error).message}`);
    }
  }

  async function protectedApi(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const header = request.headers.authorization ?? "";
    const token = header.startsWith("Bearer ") ? await provider.AccessToken.find(header.slice("Bearer ".length)) : undefined;
    response.setHeader("content-type", "application/json");
    if (!token) {
      apiCalls.unauthorized += 1;
      response.statusCode = 401;
      response.end(JSON.stringify({ error: "invalid_token" }));
      return;
    }
    apiCalls.ok += 1;
    response.end(JSON.stringify({ sub: token.accountId, scope: token.scope }));
  }

  return {
    issuer,
    clientId,
    clientSecret,
    refreshes,
    apiCalls,
    issuedTokens: () => [...issued],
    setAccessTokenSeconds(seconds) {
      accessTokenSeconds = seconds;
    },
    setTokenDelayMs(ms) {
      tokenDelayMs = ms;
    },
    setTokenOutage(status) {
      outageStatus = status;
    },
    tokenRequests: () => tokenRequestCount,
    async revokeAccessTokens() {
      for (const token of issued) await (await provider.AccessToken.find(token))?.destroy();
    },
    async revokeAll() {
      for (const id of grantIds) await (await provider.Grant.find(id))?.destroy();
    },
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}

/**
 * Follows a browser's redirects from `url` with cookies kept per host, as a
 * person's browser would through the provider's login and consent, until an
 * answer that is not a redirect; returns it with the URL that gave it.
 * `confirm`: on Runnel's "Connect … to the Runnel user …?" page, the person
 * presses Continue (the form is posted from the page's own origin).
 */
export async function followLikeABrowser(url: string, options: { confirm?: boolean; jar?: Map<string, Map<string, string>> } = {}): Promise<{ url: string; status: number; text: string }> {
  const jar = options.jar ?? new Map<string, Map<string, string>>();
  let current = url;
  let post: { body: string; origin: string } | null = null;
  for (let hop = 0; hop < 20; hop++) {
    const host = new URL(current).host;
    const cookies = jar.get(host) ?? new Map<string, string>();
    const headers: Record<string, string> = cookies.size > 0 ? { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") } : {};
    const response = await fetch(current, post ? { method: "POST", redirect: "manual", headers: { ...headers, origin: post.origin, "content-type": "application/x-www-form-urlencoded" }, body: post.body } : { redirect: "manual", headers });
    post = null;
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
    jar.set(host, cookies);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.arrayBuffer();
      current = new URL(location, current).toString();
      continue;
    }
    const text = await response.text();
    const form = /<form method="post" action="\/oauth\/authorize"><input type="hidden" name="state" value="([^"]+)">/.exec(text);
    if (options.confirm && form && response.status === 200) {
      const origin = new URL(current).origin;
      post = { body: new URLSearchParams({ state: form[1]! }).toString(), origin };
      current = `${origin}/oauth/authorize`;
      continue;
    }
    return { url: current, status: response.status, text };
  }
  throw new Error(`more than 20 redirects from ${url}`);
}
