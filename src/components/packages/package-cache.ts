import { randomBytes } from "node:crypto";
import { mkdir, readdir, realpath, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { x as extract } from "tar";
import { nameOfLockKey, type LockedPackage, type PackageLock } from "../../domain/package-lock.js";
import { cacheKeyOf } from "./integrity.js";

export interface PackageCacheOptions {
  /** `<data dir>/packages`: shared by every component of this server. */
  root: string;
  /** Downloads a tarball and checks it against the integrity. */
  download(key: string, tarball: string, integrity: string): Promise<Buffer>;
}

/** Folders that an interrupted install left behind are removed once they are this old. */
const STALE_MS = 60 * 60 * 1000;

/**
 * Installed packages, one folder per tarball integrity: `<root>/<sha512-…>/node_modules/<name>/`.
 * A package's contents do not depend on which component uses it, so each is
 * installed once. Installing is extracting: no install script ever runs.
 * Each install unpacks into a temporary folder and renames it into place, so
 * concurrent deploys and crashes never leave half a package under its name.
 */
export class PackageCache {
  private readonly installing = new Map<string, Promise<string>>();
  private realRoot: Promise<string> | null = null;

  constructor(private readonly options: PackageCacheOptions) {}

  /** The real path of the cache (esbuild reports importers by real path). */
  root(): Promise<string> {
    this.realRoot ??= (async () => {
      await mkdir(this.options.root, { recursive: true });
      const root = await realpath(this.options.root);
      void removeStaleInstalls(root);
      return root;
    })();
    return this.realRoot;
  }

  /** Installs every package of the lock that is missing; the folder of each, by lock key. */
  async installAll(lock: PackageLock): Promise<Map<string, string>> {
    const entries = Object.entries(lock.packages);
    const folders = await Promise.all(entries.map(([key, entry]) => this.install(key, entry)));
    return new Map(entries.map(([key], index) => [key, folders[index]!]));
  }

  /** The folder holding `node_modules/<name>` of this package, installed first if missing. */
  install(key: string, entry: LockedPackage): Promise<string> {
    const cacheKey = cacheKeyOf(entry.integrity);
    let pending = this.installing.get(cacheKey);
    if (!pending) {
      pending = this.installOnce(key, entry, cacheKey);
      this.installing.set(cacheKey, pending);
      // A failure is not remembered: the next deploy tries again.
      pending.catch(() => this.installing.delete(cacheKey));
    }
    return pending;
  }

  private async installOnce(key: string, entry: LockedPackage, cacheKey: string): Promise<string> {
    const root = await this.root();
    const folder = join(root, cacheKey);
    if (await exists(folder)) return folder;
    const bytes = await this.options.download(key, entry.tarball, entry.integrity);
    const temporary = join(root, `.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
    try {
      const target = join(temporary, "node_modules", nameOfLockKey(key));
      await mkdir(target, { recursive: true });
      await unpack(bytes, target);
      await rename(temporary, folder);
    } catch (error) {
      await rm(temporary, { recursive: true, force: true });
      // Another process (or deploy) installed the same package first: theirs is as good as ours.
      if (await exists(folder)) return folder;
      throw error;
    }
    return folder;
  }
}

/**
 * Extracts a package tarball (its files sit under one top folder, `package/`
 * by npm's convention). Only files and folders: a link in a tarball could
 * point anywhere on this machine, and the bundler would read through it.
 */
function unpack(bytes: Buffer, target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = extract({
      cwd: target,
      strip: 1,
      preserveOwner: false,
      filter: (_path, entry) => {
        const record = entry as { type?: string; mode?: number };
        const directory = record.type === "Directory";
        if (!directory && record.type !== "File" && record.type !== "OldFile" && record.type !== "ContiguousFile") return false;
        // Readable whatever the archive says (as npm installs them); nothing here is ever executed.
        record.mode = directory ? 0o755 : 0o644;
        return true;
      },
    });
    stream.on("error", reject);
    stream.on("close", () => resolve());
    stream.end(bytes);
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function removeStaleInstalls(root: string): Promise<void> {
  try {
    const now = Date.now();
    for (const name of await readdir(root)) {
      if (!name.startsWith(".tmp-")) continue;
      const info = await stat(join(root, name)).catch(() => null);
      if (info && now - info.mtimeMs > STALE_MS) await rm(join(root, name), { recursive: true, force: true });
    }
  } catch {
    // Best effort: a leftover folder costs disk space, nothing else.
  }
}
