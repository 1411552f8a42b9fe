import { createHash, randomBytes } from "node:crypto";

/** A person (or robot) with API keys; every resource belongs to one user. */
export interface User {
  id: string;
  username: string;
  email: string | null;
  isAdmin: boolean;
  createdAt: number; // epoch ms
}

/** An API key as stored: never the secret, only its hash and a short prefix to recognise it. */
export interface ApiKey {
  id: string;
  ownerId: string;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

const KEY_MARKER = "rnl_";

/** A new API key secret: a marker (so scanners can spot leaked keys) and 256 random bits. */
export function generateApiKeySecret(): string {
  return `${KEY_MARKER}${randomBytes(32).toString("base64url")}`;
}

/**
 * The stored form of a key. Keys carry 256 random bits, so one SHA-256 is as safe
 * as a slow password hash would be, and it keeps every request's auth check cheap.
 */
export function hashApiKeySecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** The part of a key shown in listings, so a user can tell their keys apart. */
export function apiKeyPrefix(secret: string): string {
  return secret.slice(0, KEY_MARKER.length + 6);
}

export function looksLikeApiKey(secret: string): boolean {
  return secret.startsWith(KEY_MARKER) && secret.length === KEY_MARKER.length + 43;
}

export const USERNAME_RULE = "1 to 40 lower-case letters, digits, '-' or '_', starting and ending with a letter or digit";

const USERNAME_REGEX = /^[a-z0-9](?:[a-z0-9_-]{0,38}[a-z0-9])?$/;

export function isValidUsername(username: string): boolean {
  return USERNAME_REGEX.test(username);
}

export const EMAIL_RULE = "an address like you@example.com (no spaces, one @, a dot in the domain), at most 254 characters";

const EMAIL_REGEX = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;

/** A plausible mail address: enough to catch a typo or a pasted name, not a proof that it receives mail. */
export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL_REGEX.test(email);
}

/** What a user without an address is told, wherever a mail of theirs could not be sent (the outbox, the log). */
export const SET_EMAIL_HINT = "Set your address with `runnel users update --email you@example.com` (or PATCH /v1/users/me {\"email\": …}); the admin's can also come from RUNNEL_ADMIN_EMAIL at the server's start.";

/**
 * The one workspace (the hosted API's "org", `o_…`) each user has, as
 * clients of the hosted API expect: derived from the user's id, so it needs
 * no storage and never changes.
 */
export function workspaceIdOf(userId: string): string {
  return `o_${userId.slice(userId.indexOf("_") + 1)}`;
}
