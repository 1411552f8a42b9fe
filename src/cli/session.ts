import { ApiClient } from "../client/api-client.js";
import { configFilePath, readProfile } from "./profiles.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** A command's view of who it is and where: the profile, or RUNNEL_SERVER_URL and RUNNEL_API_KEY. */
export interface Session {
  profile: string;
  client: ApiClient;
}

/**
 * The API client for a command. RUNNEL_API_KEY (with RUNNEL_SERVER_URL, or
 * the local server) wins; otherwise the saved profile's key, sent to
 * RUNNEL_SERVER_URL when that is set (the same login on another address of
 * its server: a tunnel, a container's name) or to the profile's server.
 * Tells the user how to log in when there is neither.
 */
export async function openSession(env: Env, profile: string): Promise<Session> {
  const keyFromEnv = env.RUNNEL_API_KEY?.trim();
  const urlFromEnv = env.RUNNEL_SERVER_URL?.trim();
  if (keyFromEnv) return { profile, client: new ApiClient({ serverUrl: urlFromEnv || "http://127.0.0.1:8080", apiKey: keyFromEnv }) };
  const saved = await readProfile(configFilePath(env), profile);
  if (!saved) {
    const flag = profile === "default" ? "" : ` -p ${profile}`;
    const where = profile === "default" ? "" : ` on profile "${profile}"`;
    const orKey = urlFromEnv ? ", or set RUNNEL_API_KEY with RUNNEL_SERVER_URL" : "";
    throw new Error(`You are not logged in${where}. Run \`runnel login${flag}\` first${orKey}.`);
  }
  return { profile, client: new ApiClient({ serverUrl: urlFromEnv || saved.serverUrl, apiKey: saved.apiKey }) };
}
