import { aptInstall, canInstall, hasCommand } from "./apt.js";

/**
 * Vitest global set-up: the network tests make test hosts in network
 * namespaces of their own with iproute2's `ip`, installed here where it is
 * missing and the tests run as root (as on the CI machines).
 */
export default function installNetworkTools(): void {
  if (hasCommand("ip") || !canInstall()) return;
  try {
    aptInstall("iproute2");
    console.warn("[test set-up] installed iproute2 for the network tests.");
  } catch (error) {
    console.warn(`[test set-up] could not install iproute2 (${(error as Error).message}); the network tests will fail.`);
  }
}
