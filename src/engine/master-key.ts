import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ResealCounts, Store } from "../store/store.js";
import { isSealed, SecretBox } from "./secrets.js";

export const MASTER_KEY_FILE_NAME = "master-key";
/** A rotation writes the new key here first, and renames it over the key once every value is sealed with it. */
export const PENDING_KEY_SUFFIX = ".next";

/** Where the key file is: RUNNEL_MASTER_KEY_FILE, else `<data>/master-key`. */
export function masterKeyPath(dataDir: string, file: string | null): string {
  return file ?? join(dataDir, MASTER_KEY_FILE_NAME);
}

/** 32 bytes as 64 hex characters or base64, as a key file holds them (a trailing newline is fine). */
export function parseKeyText(text: string, path: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== 32) throw new Error(`${path} does not hold a master key (32 bytes as 64 hex characters or base64). Restore it from a backup, or point RUNNEL_MASTER_KEY_FILE at the right file.`);
  return key;
}

/**
 * The key that encrypts secret props: RUNNEL_MASTER_KEY when set, else the
 * file (RUNNEL_MASTER_KEY_FILE, or the one in the data folder), made on first
 * use. Several servers sharing a PostgreSQL database must share the key too.
 */
export async function loadOrCreateMasterKey(dataDir: string, configured: Buffer | null, file: string | null = null): Promise<Buffer> {
  if (configured) return configured;
  const path = masterKeyPath(dataDir, file);
  try {
    return parseKeyText(await readFile(path, "utf8"), path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const key = randomBytes(32);
  try {
    // `wx`: if another process made the file first, use theirs.
    await writeFile(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return loadOrCreateMasterKey(dataDir, null, file);
    throw error;
  }
}

/**
 * A rotation that stopped between sealing every value with the new key and
 * renaming the new key file into place leaves `<key>.next`: whichever key
 * opens what the store holds is the one in force. Returns it, with the files
 * put right.
 */
export async function settlePendingRotation(path: string, current: Buffer, store: Store): Promise<Buffer> {
  let pending: Buffer;
  try {
    pending = parseKeyText(await readFile(`${path}${PENDING_KEY_SUFFIX}`, "utf8"), `${path}${PENDING_KEY_SUFFIX}`);
  } catch {
    return current;
  }
  const sample = await store.anySealedValue(isSealed);
  if (sample !== null && opens(new SecretBox(pending), sample)) {
    await rename(`${path}${PENDING_KEY_SUFFIX}`, path);
    return pending;
  }
  await rm(`${path}${PENDING_KEY_SUFFIX}`, { force: true });
  return current;
}

function opens(box: SecretBox, sealed: string): boolean {
  try {
    box.open(sealed);
    return true;
  } catch {
    return false;
  }
}

export interface Rotation {
  key: Buffer;
  counts: ResealCounts;
}

/**
 * Seals every secret again with a new key, in one transaction, then puts the
 * new key where the old one was. The new key is on disk (`<path>.next`)
 * before any value is sealed with it, so no value is ever under a key that
 * exists nowhere; see settlePendingRotation for a stop in between.
 */
export async function rotateMasterKey(options: { store: Store; current: Buffer; path: string }): Promise<Rotation> {
  const { store, current, path } = options;
  const key = randomBytes(32);
  const pendingPath = `${path}${PENDING_KEY_SUFFIX}`;
  await writeFile(pendingPath, `${key.toString("hex")}\n`, { mode: 0o600 });
  const before = new SecretBox(current);
  const after = new SecretBox(key);
  let counts: Rotation["counts"];
  try {
    counts = await store.resealSecrets((value) => (isSealed(value) ? after.seal(before.open(value)) : null));
  } catch (error) {
    await rm(pendingPath, { force: true });
    throw error;
  }
  await rename(pendingPath, path);
  return { key, counts };
}
