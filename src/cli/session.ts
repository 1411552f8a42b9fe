import { ApiClient } from "../client/api-client.js";
import { configFilePath, readProfile } from "./profiles.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** A command's view of who it is and where: the profile, or RUNNEL_SERVER_URL and RUNNEL_API_KEY. */
export interface Session {
  profile: string;
  client: ApiClient;
}

/** The API client for a command, from the environment or the saved profile; tells the user how to log in otherwise. */
export async function openSession(env: Env, profile: string): Promise<Session> {
  const fromEnv = env.RUNNEL_API_KEY?.trim();
  if (fromEnv) {
    const serverUrl = env.RUNNEL_SERVER_URL?.trim() || "http://127.0.0.1:8080";
    return { profile, client: new ApiClient({ serverUrl, apiKey: fromEnv }) };
  }
  const saved = await readProfile(configFilePath(env), profile);
  if (!saved) {
    const flag = profile === "default" ? "" : ` -p ${profile}`;
    throw new Error(`You are not logged in${profile === "default" ? "" : ` on profile "${profile}"`}. Run \`runnel login${flag}\` first.`);
  }
  return { profile, client: new ApiClient({ serverUrl: saved.serverUrl, apiKey: saved.apiKey }) };
}
