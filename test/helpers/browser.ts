import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";
import { CHROMIUM_PATH } from "../setup/chromium.js";
import { startTestServer, type TestServer } from "./server.js";

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const axePath = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** A real server with the built console, a browser, and a signed-in-able user: what a console test needs. */
export interface ConsoleHarness {
  server: TestServer;
  browser: Browser;
  /** The server's address, where the console is. */
  url: string;
  /** The admin's API key (what a user types into the sign-in page). */
  key: string;
  /** A page in a fresh context (its own cookies), watched for browser errors (see expectNoBrowserErrors). */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Builds the console when it is out of date (skipped when up to date, as
 * `npm run build` is), starts a server on a random port and launches
 * Debian's Chromium headless. Call in beforeAll; close() in afterAll.
 */
export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleHarness> {
  buildOnce();
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package (apt-get install chromium) to run the browser tests.`);
  const server = await startTestServer(env);
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const contexts: BrowserContext[] = [];
  return {
    server,
    browser,
    url: server.url,
    key: server.adminKey,
    async newPage(options = {}) {
      const context = await browser.newContext({ baseURL: server.url, ...options });
      contexts.push(context);
      // Shorter than the test's own timeout, so that a failure names the locator that never appeared.
      context.setDefaultTimeout(20_000);
      const page = await context.newPage();
      watchBrowserErrors(page);
      return page;
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await server.close();
    },
  };
}

let built = false;
/** `npm run build`'s script: compiles what changed (the console included), nothing when all is up to date. */
function buildOnce(): void {
  if (built) return;
  const result = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}\n${result.stderr}`);
  built = true;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

const browserErrors = new WeakMap<Page, string[]>();

/**
 * The browser's own complaints: uncaught exceptions, console.error, CSP
 * violations. An API answer of 4xx that the console handles (a 401 before
 * sign-in, a validation error it shows) is logged by Chromium as "Failed to
 * load resource": that alone is not a fault; 5xx and network failures are.
 */
function watchBrowserErrors(page: Page): void {
  const errors: string[] = [];
  browserErrors.set(page, errors);
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const text = message.text();
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(text)) return;
    errors.push(`console.error: ${text} (${message.location().url})`);
  });
}

/** Fails the test when the page had any browser error (call at the end of each test, or in afterEach). */
export function expectNoBrowserErrors(page: Page): void {
  const errors = browserErrors.get(page) ?? [];
  if (errors.length > 0) throw new Error(`The browser reported ${errors.length} error(s):\n${errors.join("\n")}`);
}

/** Signs in through the sign-in page with an API key, as a user would, and waits for the signed-in console. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.goto("/sign-in");
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

/**
 * A picture of the page (full page): into docs/screenshots/<name>.png, for the README, when RUNNEL_SCREENSHOTS=1
 * (`RUNNEL_SCREENSHOTS=1 npx vitest run test/ui`); otherwise into a temporary folder, so that a test run leaves the
 * working tree as it found it while the page is still rendered whole.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const folder = process.env.RUNNEL_SCREENSHOTS === "1" ? join(root, "docs", "screenshots") : join(tmpdir(), "runnel-screenshots");
  await mkdir(folder, { recursive: true });
  await page.screenshot({ path: join(folder, `${name}.png`), fullPage: true });
}

/**
 * axe-core on the page as it is: zero serious or critical violations. The
 * console's CSP forbids injected scripts, so axe is not added as a script
 * tag: its source is evaluated through the DevTools protocol, which the
 * policy does not govern, in the page under test itself (which keeps the
 * real policy). A twin page in a context that bypassed CSP, as this did
 * before, cost a browser context, a renderer and a second load of the page
 * for each check: half of the browser tests' CPU. `ready` waits for what
 * must be shown before checking (a heading, a table): pass it.
 */
export async function checkAccessibility(page: Page, ready?: (page: Page) => Promise<unknown>): Promise<void> {
  if (ready) await ready(page);
  // A string, evaluated in the page: the tests' TypeScript has no DOM types.
  const violations = await page.evaluate<AxeViolation[]>(`(() => {
    if (!window.axe) { ${axeSource()}\n }
    return axe.run(document, { resultTypes: ["violations"] }).then((result) => result.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((node) => JSON.stringify(node.target)),
    })));
  })()`);
  const serious = violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
  if (serious.length > 0) {
    throw new Error(`Accessibility (axe-core) at ${page.url()}: ${serious.length} serious or critical violation(s):\n${serious.map((v) => `- [${v.impact}] ${v.id}: ${v.help} at ${v.targets.join(", ")}`).join("\n")}`);
  }
}

let axeText: string | undefined;
/** axe-core's script, read once. */
function axeSource(): string {
  axeText ??= readFileSync(axePath, "utf8");
  return axeText;
}
