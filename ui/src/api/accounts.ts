import { api, apiData, segment } from "./client";
import type { AccountView, AppView, OAuthStartView, Page } from "./types";

/**
 * The user's connected accounts and the apps they belong to (issue 17). Shared
 * by the Accounts page and the props form's account picker.
 */
export const accountKeys = {
  all: ["accounts"] as const,
  list: (app?: string) => [...accountKeys.all, "list", app ?? "*"] as const,
  apps: () => ["apps"] as const,
};

/** Every account of the user (of one app when given); the API answers them whole. */
export const listAccounts = async (app: string | undefined, signal?: AbortSignal): Promise<AccountView[]> =>
  (await api<Page<AccountView>>("GET", "/v1/accounts", { query: app ? { app } : {}, signal })).data;

export const listApps = async (signal?: AbortSignal): Promise<AppView[]> => (await api<Page<AppView>>("GET", "/v1/apps", { signal })).data;

export const connectKeysAccount = (body: { app: string; name: string; fields: Record<string, string> }) => apiData<AccountView>("POST", "/v1/accounts", { body });
export const startOAuth = (body: { app: string; name: string }) => apiData<OAuthStartView>("POST", "/v1/accounts/oauth/start", { body });
export const renameAccount = (id: string, name: string) => apiData<AccountView>("PATCH", `/v1/accounts/${segment(id)}`, { body: { name } });
export const deleteAccount = (id: string) => api<void>("DELETE", `/v1/accounts/${segment(id)}`);
/** A key-based account takes new fields at once; an OAuth one answers an authorization URL to open. */
export const reconnectAccount = (id: string, fields?: Record<string, string>) =>
  apiData<AccountView | OAuthStartView>("POST", `/v1/accounts/${segment(id)}/reconnect`, { body: fields ? { fields } : {} });
