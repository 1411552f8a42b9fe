import { existsSync } from "node:fs";
import { aptInstall, canInstall } from "./apt.js";

/** Where Debian's chromium package puts the browser the console's tests drive (never a downloaded build). */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * Vitest global set-up: the web console's browser tests (test/ui) drive
 * Debian's Chromium through playwright-core. Installed here where the machine
 * allows (root with apt, as on the CI machines), as bubblewrap is; where it
 * cannot be, the browser tests fail saying so (test/helpers/browser.ts).
 */
export default function installChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  if (!canInstall()) {
    console.warn(`[test set-up] ${CHROMIUM_PATH} is missing and cannot be installed here: the browser tests (test/ui) will fail. Install Debian's chromium package.`);
    return;
  }
  try {
    aptInstall("chromium");
    console.warn("[test set-up] installed chromium for the browser tests.");
  } catch (error) {
    console.warn(`[test set-up] could not install chromium (${(error as Error).message}): the browser tests (test/ui) will fail.`);
  }
}
