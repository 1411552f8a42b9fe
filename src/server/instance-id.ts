/**
 * This server's instance id: made once in its data folder and kept across
 * restarts, so that a process that starts again knows which leases were its
 * own (see 0011-delivery-claimer). Processes sharing a database each have a
 * data folder, and so an id, of their own.
 */
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const FILE = "instance-id";

export async function loadOrCreateInstanceId(dataDir: string): Promise<string> {
  const path = join(dataDir, FILE);
  try {
    const id = (await readFile(path, "utf8")).trim();
    if (/^[0-9a-f]{32}$/.test(id)) return id;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const id = randomBytes(16).toString("hex");
  try {
    await writeFile(path, `${id}\n`, { mode: 0o600, flag: "wx" });
    return id;
  } catch (error) {
    // Another process of this data folder made it first: theirs is ours.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return loadOrCreateInstanceId(dataDir);
    throw error;
  }
}
