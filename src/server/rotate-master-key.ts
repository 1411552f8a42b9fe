/**
 * `runnel admin rotate-master-key`, run against the data folder (and
 * DATABASE_URL) the server uses, while no server runs on it: every sealed
 * secret is sealed again with a new key, in one transaction, and the new key
 * replaces the old where it lives.
 */
import { join } from "node:path";
import type { RunnelConfig } from "../config/config.js";
import { loadOrCreateMasterKey, masterKeyPath, rotateMasterKey, settlePendingRotation } from "../engine/master-key.js";
import { openStore } from "../store/open-store.js";
import { runningServerPid } from "./server-pid-file.js";

export interface RotationOutcome {
  /** What to tell the person who ran it. */
  summary: string;
  /** The new key, to print, when it lives in RUNNEL_MASTER_KEY (the environment is theirs to change). */
  keyToShow: string | null;
}

export async function rotateConfiguredMasterKey(config: RunnelConfig): Promise<RotationOutcome> {
  const running = runningServerPid(config.dataDir);
  if (running !== null) throw new Error(`A server (pid ${running}) is running on ${config.dataDir}: it holds the current key in memory. Stop it, rotate, then start it again.`);
  const store = await openStore({ databaseUrl: config.databaseUrl, databasePoolSize: config.databasePoolSize, dataDir: config.dataDir });
  try {
    const fromEnvironment = config.masterKey !== null;
    // Where the new key goes: the key file; with RUNNEL_MASTER_KEY, a file beside the data, so the key is never only on a screen.
    const path = fromEnvironment ? join(config.dataDir, "master-key.rotated") : masterKeyPath(config.dataDir, config.masterKeyFile);
    const loaded = await loadOrCreateMasterKey(config.dataDir, config.masterKey, config.masterKeyFile);
    const current = fromEnvironment ? loaded : await settlePendingRotation(path, loaded, store);
    const { key, counts } = await rotateMasterKey({ store, current, path });
    const what = `${counted(counts.values, "secret")} of ${counted(counts.sources, "source")}, ${counted(counts.workflows, "workflow")}, ${counted(counts.envVars, "environment variable")}, ${counted(counts.webhooks, "webhook")}, ${counted(counts.appAccounts, "connected account")} and ${counted(counts.oauthClients, "OAuth client")}`;
    if (fromEnvironment) {
      return {
        summary: `Re-sealed ${what} with a new master key, saved in ${path}. Set RUNNEL_MASTER_KEY to it (printed above) on every server of this database before you start them: the old key no longer opens anything.`,
        keyToShow: key.toString("hex"),
      };
    }
    return { summary: `Re-sealed ${what} with a new master key, written to ${path}. Start the server again; keep a backup of the new key, the old one no longer opens anything.`, keyToShow: null };
  } finally {
    await store.close();
  }
}

/** `1 source`, `2 sources`. */
function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
