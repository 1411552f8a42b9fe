import { execFileSync } from "node:child_process";
import { findBubblewrap } from "../../src/sandbox/bubblewrap.js";

/**
 * Vitest global set-up: the sandbox runs user code under bubblewrap where the
 * machine allows, so the tests install it where they can (root with apt, as on
 * the CI machines) and otherwise say once that runners rely on Node's
 * permission model alone. It never fails the run: the sandbox falls back.
 */
export default function installBubblewrap(): void {
  if (findBubblewrap()) return;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || !hasCommand("apt-get")) {
    console.warn("[test set-up] bubblewrap (bwrap) is not installed and cannot be installed here; sandbox tests run on Node's permission model alone.");
    return;
  }
  const apt = (args: string[]) => execFileSync("apt-get", args, { stdio: "ignore", timeout: 180_000, env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  try {
    try {
      apt(["install", "-y", "-qq", "bubblewrap"]);
    } catch {
      apt(["update", "-qq"]); // a fresh machine may have no package lists yet
      apt(["install", "-y", "-qq", "bubblewrap"]);
    }
    console.warn("[test set-up] installed bubblewrap for the sandbox tests.");
  } catch (error) {
    console.warn(`[test set-up] could not install bubblewrap (${(error as Error).message}); sandbox tests run on Node's permission model alone.`);
  }
}

function hasCommand(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
