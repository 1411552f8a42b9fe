import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import ini from "ini";

/** One named login: where the server is and the key to use there. */
export interface Profile {
  serverUrl: string;
  apiKey: string;
}

export const DEFAULT_PROFILE = "default";

/** `$XDG_CONFIG_HOME/runnel/config`, else `~/.config/runnel/config`. */
export function configFilePath(env: Readonly<Record<string, string | undefined>>): string {
  const base = env.XDG_CONFIG_HOME?.trim() || join(env.HOME?.trim() || homedir(), ".config");
  return join(base, "runnel", "config");
}

type IniDocument = Record<string, unknown>;

async function readDocument(path: string): Promise<IniDocument> {
  try {
    return ini.parse(await readFile(path, "utf8")) as IniDocument;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
}

function sectionOf(document: IniDocument, name: string): Record<string, unknown> | undefined {
  const section = document[name];
  if (section && typeof section === "object") return section as Record<string, unknown>;
  // Keys at the top of the file belong to the default profile, as in the hosted tool's config.
  if (name === DEFAULT_PROFILE && typeof document.api_key === "string") return document;
  return undefined;
}

export async function readProfile(path: string, name: string): Promise<Profile | null> {
  const section = sectionOf(await readDocument(path), name);
  if (!section || typeof section.api_key !== "string" || typeof section.server_url !== "string") return null;
  return { apiKey: section.api_key, serverUrl: section.server_url };
}

/** Saves a profile, keeping the others; the file holds keys, so only its owner may read it. */
export async function writeProfile(path: string, name: string, profile: Profile): Promise<void> {
  const document = await readDocument(path);
  if (name === DEFAULT_PROFILE) {
    delete document.api_key;
    delete document.server_url;
  }
  document[name] = { server_url: profile.serverUrl, api_key: profile.apiKey };
  await saveDocument(path, document);
}

/** Removes a profile; false when there was none of that name. */
export async function removeProfile(path: string, name: string): Promise<boolean> {
  const document = await readDocument(path);
  if (!sectionOf(document, name)) return false;
  if (document[name] === undefined) {
    delete document.api_key;
    delete document.server_url;
  } else {
    delete document[name];
  }
  await saveDocument(path, document);
  return true;
}

async function saveDocument(path: string, document: IniDocument): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const pending = `${path}.${process.pid}.tmp`;
  await writeFile(pending, ini.stringify(document), { mode: 0o600 });
  await chmod(pending, 0o600);
  await rename(pending, path);
}
