import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const MASTER_KEY_FILE_NAME = "master-key";

/**
 * The key that encrypts secret props: RUNNEL_MASTER_KEY when set, else the one
 * in the data folder, made on first use. Several servers sharing a PostgreSQL
 * database must share RUNNEL_MASTER_KEY too.
 */
export async function loadOrCreateMasterKey(dataDir: string, configured: Buffer | null): Promise<Buffer> {
  if (configured) return configured;
  const path = join(dataDir, MASTER_KEY_FILE_NAME);
  try {
    const key = Buffer.from((await readFile(path, "utf8")).trim(), "hex");
    if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte hex key. Restore it from a backup, or set RUNNEL_MASTER_KEY.`);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const key = randomBytes(32);
  try {
    // `wx`: if another process made the file first, use theirs.
    await writeFile(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return loadOrCreateMasterKey(dataDir, null);
    throw error;
  }
}
