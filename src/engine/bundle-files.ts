import { randomBytes } from "node:crypto";
import { link, mkdir, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Bundles live in the store (so every worker of a cluster can run them) and are
 * written to a local folder per content hash when first run here. Each bundle
 * has a folder of its own because a runner may read only its bundle's folder.
 *
 * A bundle file, once there, is never replaced: runners hard-link it into
 * their own folders, and Linux refuses (ENOENT) to link a file whose name was
 * just renamed over by another write of the same bytes. So one write per hash
 * at a time in this process, and a write that finds the file there (another
 * process's) keeps that one.
 */
export class BundleFiles {
  private readonly written = new Set<string>();
  private readonly writing = new Map<string, Promise<string>>();

  constructor(private readonly root: string) {}

  async fileFor(hash: string, code: () => Promise<string> | string): Promise<string> {
    const file = join(this.root, hash, "component.cjs");
    if (this.written.has(hash)) return file;
    let pending = this.writing.get(hash);
    if (!pending) {
      pending = this.write(hash, file, code).finally(() => this.writing.delete(hash));
      this.writing.set(hash, pending);
    }
    await pending;
    this.written.add(hash);
    return file;
  }

  private async write(hash: string, file: string, code: () => Promise<string> | string): Promise<string> {
    try {
      await stat(file);
      return file;
    } catch {
      // Not there yet: written below.
    }
    await mkdir(join(this.root, hash), { recursive: true, mode: 0o755 });
    // Written beside the bundle folders, not in one (a runner given the folder meanwhile must see whole files only),
    // under a name of its own (another process may write the same bundle at the same time).
    const pendingFolder = `${this.root}.pending`;
    await mkdir(pendingFolder, { recursive: true, mode: 0o700 });
    const pending = join(pendingFolder, `${hash}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
    await writeFile(pending, await code(), { mode: 0o644 });
    try {
      // link, not rename: it never replaces a file already there.
      await link(pending, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      await unlink(pending).catch(() => undefined);
    }
    return file;
  }
}
