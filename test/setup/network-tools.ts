import { execFileSync } from "node:child_process";

/**
 * Vitest global set-up: the network tests make test hosts in network
 * namespaces of their own with iproute2's `ip`, installed here where it is
 * missing and the tests run as root (as on the CI machines).
 */
export default function installNetworkTools(): void {
  if (hasCommand("ip") || process.getuid?.() !== 0 || !hasCommand("apt-get")) return;
  const apt = (args: string[]) => execFileSync("apt-get", args, { stdio: "ignore", timeout: 180_000, env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  try {
    try {
      apt(["install", "-y", "-qq", "iproute2"]);
    } catch {
      apt(["update", "-qq"]);
      apt(["install", "-y", "-qq", "iproute2"]);
    }
    console.warn("[test set-up] installed iproute2 for the network tests.");
  } catch (error) {
    console.warn(`[test set-up] could not install iproute2 (${(error as Error).message}); the network tests will fail.`);
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
