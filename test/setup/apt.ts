import { execFileSync } from "node:child_process";

/**
 * Installs a Debian package for the tests, where the machine allows it (root
 * with apt, as on the CI machines): a fresh machine may have no package lists
 * yet, so they are fetched once when the first try fails. Throws when it
 * cannot; the caller says what that means.
 */
export function aptInstall(pkg: string): void {
  const apt = (args: string[]) => execFileSync("apt-get", args, { stdio: "ignore", timeout: 180_000, env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  try {
    apt(["install", "-y", "-qq", pkg]);
  } catch {
    apt(["update", "-qq"]);
    apt(["install", "-y", "-qq", pkg]);
  }
}

export function canInstall(): boolean {
  return process.getuid?.() === 0 && hasCommand("apt-get");
}

export function hasCommand(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
