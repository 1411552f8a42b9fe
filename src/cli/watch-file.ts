import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";

/** Files a component may import by relative path; other files in the folder (editor swap files) are ignored. */
const CODE_FILE = /\.(c|m)?(j|t)s$|\.json$/;

/**
 * Calls `onChange` once a burst of saves has settled. Watches the file and its
 * folder: editors that save by writing a new file and renaming it over the old
 * one end a watch on the file itself, and the folder also holds the app and
 * helper files a component imports. Files imported from other folders are not
 * watched.
 */
export function watchComponentFile(path: string, onChange: () => void, debounceMs = 200): { close(): void } {
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  const changed = (_event: string, filename: string | Buffer | null) => {
    const file = filename?.toString();
    if (file && file !== name && !CODE_FILE.test(file)) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  };
  const watchers: FSWatcher[] = [];
  for (const target of [path, dirname(path)]) {
    try {
      const watcher = watch(target, changed);
      // A watch on a file that was renamed away ends with an error on some systems; the folder watch carries on.
      watcher.on("error", () => watcher.close());
      watchers.push(watcher);
    } catch {
      // Unwatchable (a network folder, say): the other watch may still work.
    }
  }
  if (watchers.length === 0) throw new Error(`Cannot watch ${path} for changes.`);
  return {
    close() {
      clearTimeout(timer);
      watchers.forEach((watcher) => watcher.close());
    },
  };
}
