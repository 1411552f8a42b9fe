import { createHash, randomBytes } from "node:crypto";
import { looksLikeApiKey } from "../domain/accounts.js";
import { UnauthorizedError } from "../domain/errors.js";
import { newId } from "../domain/ids.js";
import type { Store } from "../store/store.js";
import type { Accounts, Principal } from "./accounts.js";

/** A session ends after this long without a request... */
export const SESSION_IDLE_MS = 7 * 24 * 60 * 60 * 1000;
/** ...and at the latest this long after it began, used or not. */
export const SESSION_MAX_MS = 30 * 24 * 60 * 60 * 1000;
/** A sign-in link from `runnel open` is good for one use within a minute. */
export const SIGN_IN_LINK_MS = 60 * 1000;

export interface StartedSession {
  /** The cookie's value: shown once, stored only hashed. */
  token: string;
  principal: Principal;
  expiresAt: number;
}

export interface SessionsOptions {
  store: Store;
  accounts: Accounts;
  now?: () => number;
  /** How often a session's last use is written at most; keeps cookie auth free of a write per request. */
  touchIntervalMs?: number;
}

/** The web console's sessions: an API key or a one-time link exchanged for a cookie that authenticates like the key. */
export class Sessions {
  private readonly store: Store;
  private readonly accounts: Accounts;
  private readonly now: () => number;
  private readonly touchIntervalMs: number;

  constructor(options: SessionsOptions) {
    this.store = options.store;
    this.accounts = options.accounts;
    this.now = options.now ?? Date.now;
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
  }

  /** Signs in with an API key typed into the console. */
  async startWithApiKey(secret: string): Promise<StartedSession> {
    if (!looksLikeApiKey(secret.trim())) {
      throw new UnauthorizedError("That is not an API key: keys start with rnl_ and are 47 characters long. Copy it again, or make one with `runnel keys create`.");
    }
    const principal = await this.accounts.authenticate(secret.trim());
    return this.start(principal);
  }

  /** Signs in with a one-time link's token (`runnel open`). */
  async startWithSignInToken(token: string): Promise<StartedSession> {
    const at = this.now();
    const link = await this.store.useSignInLink(hashToken(token), at);
    if (!link) {
      throw new UnauthorizedError("This sign-in link was already used, has expired (links last one minute) or is not valid. Run `runnel open` again for a new one, or sign in with an API key.");
    }
    const user = await this.store.findUser(link.ownerId);
    if (!user) throw new UnauthorizedError("The user of this sign-in link no longer exists.");
    return this.start({ user, keyId: link.apiKeyId });
  }

  /** A one-time sign-in link's token for the caller, valid for SIGN_IN_LINK_MS. */
  async createSignInLink(principal: Principal): Promise<{ token: string; expiresAt: number }> {
    const at = this.now();
    const token = newToken();
    const expiresAt = at + SIGN_IN_LINK_MS;
    await this.store.createSession({ id: newId("session", at), kind: "sign_in_link", tokenHash: hashToken(token), ownerId: principal.user.id, apiKeyId: principal.keyId, createdAt: at, expiresAt });
    return { token, expiresAt };
  }

  /** Resolves a session cookie to its caller, or throws Unauthorized saying what to do. */
  async authenticate(token: string): Promise<Principal> {
    const at = this.now();
    const session = await this.store.findSession(hashToken(token));
    if (!session) throw new UnauthorizedError("Your session has ended. Sign in again.");
    if (session.keyRevoked) {
      await this.store.deleteSession(session.id);
      throw new UnauthorizedError("The API key you signed in with was revoked, which ended this session. Sign in with another key.");
    }
    if (at >= session.expiresAt || at - session.lastSeenAt >= SESSION_IDLE_MS) {
      await this.store.deleteSession(session.id);
      throw new UnauthorizedError("Your session has expired. Sign in again.");
    }
    const user = await this.store.findUser(session.ownerId);
    if (!user) throw new UnauthorizedError("Your session has ended. Sign in again.");
    if (at - session.lastSeenAt >= this.touchIntervalMs) await this.store.touchSession(session.id, at);
    return { user, keyId: session.apiKeyId, sessionId: session.id };
  }

  /** Ends a session (sign-out). */
  async end(sessionId: string): Promise<void> {
    await this.store.deleteSession(sessionId);
  }

  private async start(principal: Principal): Promise<StartedSession> {
    const at = this.now();
    const token = newToken();
    const expiresAt = at + SESSION_MAX_MS;
    await this.store.deleteExpiredSessions(at);
    await this.store.createSession({ id: newId("session", at), kind: "session", tokenHash: hashToken(token), ownerId: principal.user.id, apiKeyId: principal.keyId, createdAt: at, expiresAt });
    return { token, principal, expiresAt };
  }
}

/** 256 random bits, URL- and cookie-safe. */
function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Tokens are random and long: one SHA-256 is enough (as for API keys). */
function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
