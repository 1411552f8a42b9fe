import type { SecretBox } from "../secrets.js";

/**
 * Binds an OAuth connection to the browser that confirmed it. The provider's
 * redirect carries only the state; without this, anyone handed a flow's
 * provider address (or tricked into opening it, when the provider approves
 * an app it knows without asking) would finish it into the starter's Runnel
 * account with their own provider account. The binding is a cookie that only
 * Runnel's own authorize page sets, holding the flow's state hash sealed with
 * the master key: it cannot be forged, and it names one flow, so several
 * connections can be under way in one browser.
 */
export class OAuthBrowserBinding {
  constructor(private readonly secrets: SecretBox) {}

  /** The cookie's name for a flow (a prefix of its state hash: one cookie per flow). */
  cookieName(stateHash: string): string {
    return `runnel_oauth_${stateHash.slice(0, 16)}`;
  }

  /** The cookie's value for a flow. */
  valueFor(stateHash: string): string {
    return this.secrets.seal(stateHash);
  }

  /** Whether `value` (the cookie the browser sent, if any) binds it to the flow of `stateHash`. */
  holds(stateHash: string, value: string | null): boolean {
    if (!value) return false;
    try {
      return this.secrets.open(value) === stateHash;
    } catch {
      return false;
    }
  }
}
