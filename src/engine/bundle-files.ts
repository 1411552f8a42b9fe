import { randomBytes } from "node:crypto";
import { mkdir, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Bundles live in the store (so every worker of a cluster can run them) and are
 * written to a local folder per content hash when first run here. Each bundle
 * has a folder of its own because a runner may read only its bundle's folder.
 */
export class BundleFiles {
  private readonly written = new Set<string>();

  constructor(private readonly root: string) {}

  async fileFor(hash: string, code: () => Promise<string> | string): Promise<string> {
    const folder = join(this.root, hash);
    const file = join(folder, "component.cjs");
    if (this.written.has(hash)) return file;
    try {
      await stat(file);
    } catch {
      await mkdir(folder, { recursive: true, mode: 0o755 });
      // Written beside the bundle folders, not in one: a runner being given this folder while another save of the
      // same code is under way must not see (and try to link) a file that is renamed away under it. Unique per
      // write: two saves at once must not share (and steal) one temporary file.
      // A sibling of the root (same file system, so the rename stays atomic): the root holds bundle folders only.
      const pendingFolder = `${this.root}.pending`;
      await mkdir(pendingFolder, { recursive: true, mode: 0o700 });
      const pending = join(pendingFolder, `${hash}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
      await writeFile(pending, await code(), { mode: 0o644 });
      await rename(pending, file);
    }
    this.written.add(hash);
    return file;
  }
}
