import { findBubblewrap } from "../../src/sandbox/bubblewrap.js";
import { aptInstall, canInstall } from "./apt.js";

/**
 * Vitest global set-up: the sandbox runs user code under bubblewrap where the
 * machine allows, so the tests install it where they can (root with apt, as on
 * the CI machines) and otherwise say once that runners rely on Node's
 * permission model alone. It never fails the run: the sandbox falls back.
 */
export default function installBubblewrap(): void {
  if (findBubblewrap()) return;
  if (!canInstall()) {
    console.warn("[test set-up] bubblewrap (bwrap) is not installed and cannot be installed here; sandbox tests run on Node's permission model alone.");
    return;
  }
  try {
    aptInstall("bubblewrap");
    console.warn("[test set-up] installed bubblewrap for the sandbox tests.");
  } catch (error) {
    console.warn(`[test set-up] could not install bubblewrap (${(error as Error).message}); sandbox tests run on Node's permission model alone.`);
  }
}
