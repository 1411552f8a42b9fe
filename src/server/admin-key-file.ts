import { chmod, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const ADMIN_KEY_FILE_NAME = "admin-api-key";

/**
 * Writes the admin key so that only the server's user can read it. The secret
 * goes to a temporary file first and is renamed into place only once the key
 * is committed, so a crash in between never leaves a file with a key that
 * does not exist.
 */
export async function writeAdminKeyFile(dataDir: string, secret: string, commit: () => Promise<boolean>): Promise<string | null> {
  const path = join(dataDir, ADMIN_KEY_FILE_NAME);
  const pending = `${path}.pending`;
  await writeFile(pending, `${secret}\n`, { mode: 0o600 });
  await chmod(pending, 0o600); // the mode above is ignored when the file already existed
  try {
    if (!(await commit())) {
      await unlink(pending);
      return null;
    }
  } catch (error) {
    await unlink(pending).catch(() => undefined);
    throw error;
  }
  await rename(pending, path);
  return path;
}
