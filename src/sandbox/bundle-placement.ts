/**
 * A runner may read only its own folder (its read permissions and its
 * bubblewrap view are fixed when it starts), yet it runs bundles that are
 * saved after it started. So each bundle it runs is placed in its folder
 * first: the bundle's folder, hard-linked file by file where the file system
 * allows (no copy of the bytes), copied where it does not.
 */
import { copyFileSync, linkSync, mkdirSync, readdirSync, realpathSync } from "node:fs";
import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";

/** Places the folder of `bundleFile` in `runnerDir`; returns the path of the bundle file there. */
export function placeBundle(runnerDir: string, bundleFile: string): string {
  const source = realpathOr(dirname(bundleFile));
  // Named by the source folder, not the content: two bundles of the same code in different folders keep their own files.
  const target = join(runnerDir, createHash("sha256").update(source).digest("hex").slice(0, 20));
  // The folder that holds the runners' folders is never copied: a bundle folder that contains it (a sandbox whose
  // work folder is inside it) would otherwise be copied into itself, level after level.
  copyTree(source, target, realpathOr(dirname(runnerDir)));
  return join(target, basename(bundleFile));
}

function copyTree(from: string, to: string, runnersRoot: string): void {
  mkdirSync(to, { recursive: true, mode: 0o755 });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      if (source !== runnersRoot) copyTree(source, target, runnersRoot);
    } else if (entry.isFile()) linkOrCopy(source, target);
  }
}

function linkOrCopy(source: string, target: string): void {
  try {
    linkSync(source, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return;
    copyFileSync(source, target);
  }
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
