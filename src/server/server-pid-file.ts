/**
 * `<data>/server.pid` while a server runs on a data folder, so that offline
 * admin commands (rotating the master key) can refuse to change what a
 * running server holds in memory. A file left by a crash names a process
 * that is gone, and counts for nothing.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const PID_FILE = "server.pid";

export function writeServerPid(dataDir: string): () => void {
  const path = join(dataDir, PID_FILE);
  writeFileSync(path, `${process.pid}\n`, { mode: 0o600 });
  return () => {
    try {
      if (readFileSync(path, "utf8").trim() === String(process.pid)) rmSync(path, { force: true });
    } catch {
      // Gone already.
    }
  };
}

/** The pid of a server running on the data folder, or null. */
export function runningServerPid(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, PID_FILE), "utf8").trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : null;
  }
}
