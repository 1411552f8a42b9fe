import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccessibility, expectNoBrowserErrors, screenshot, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { call } from "../helpers/server.js";

describe("the console's sign-in and sign-out, in a real browser", { timeout: 120_000 }, () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsole();
  }, 240_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("sends a visitor to sign-in, signs in with the key (kept nowhere the page can read), and shows home", async () => {
    const page = await harness.newPage();
    await page.goto("/sources");
    await page.waitForURL(/\/sign-in\?next=/);
    await expect(page.getByRole("heading", { name: "Sign in to Runnel" }).isVisible()).resolves.toBe(true);
    expect(await page.getByLabel("API key").getAttribute("type")).toBe("password");
    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: "Sign in to Runnel" }).waitFor());
    await screenshot(page, "sign-in");

    await page.getByLabel("API key").fill(harness.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    // Back where the visitor was going.
    await page.waitForURL(/\/sources$/);
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await page.getByRole("link", { name: "Home" }).click();
    await page.getByRole("heading", { name: "Home" }).waitFor();
    expect(await page.getByText("Signed in as admin").isVisible()).toBe(true);

    expect(await page.content()).not.toContain(harness.key);
    expect(await page.evaluate("localStorage.length + sessionStorage.length")).toBe(0);
    expect(await page.evaluate("document.cookie")).toBe("");
    const cookies = await page.context().cookies();
    const session = cookies.find((cookie) => cookie.name === "runnel_session");
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe("Strict");

    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: "Home" }).waitFor());
    await screenshot(page, "home");
    expectNoBrowserErrors(page);
  });

  it("signs out: the session ends on the server, so the old cookie is refused", async () => {
    const page = await harness.newPage();
    await signIn(page, harness.key);
    const cookie = (await page.context().cookies()).find((c) => c.name === "runnel_session")!.value;
    expect((await call(harness.url, "GET", "/v1/users/me", { headers: { cookie: `runnel_session=${cookie}` } })).status).toBe(200);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Runnel" }).waitFor();
    expect((await page.context().cookies()).find((c) => c.name === "runnel_session")).toBeUndefined();
    const after = await call(harness.url, "GET", "/v1/users/me", { headers: { cookie: `runnel_session=${cookie}` } });
    expect(after.status).toBe(401);
    // And the console agrees: home sends back to sign-in.
    await page.goto("/");
    await page.waitForURL(/\/sign-in/);
    expectNoBrowserErrors(page);
  });

  it("shows the API's own message for a wrong key, and keeps the visitor on sign-in", async () => {
    const page = await harness.newPage();
    await page.goto("/sign-in");
    await page.getByLabel("API key").fill(`rnl_${"a".repeat(43)}`);
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("The API key is not valid. Check that you copied all of it.");
    expect(page.url()).toContain("/sign-in");

    await page.getByLabel("API key").fill("not a key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText(/That is not an API key/).waitFor();
    expectNoBrowserErrors(page);
  });

  it("signs in with a one-time link (runnel open) and takes the token out of the address", async () => {
    const link = await call(harness.url, "POST", "/v1/sessions/links", { key: harness.key });
    const page = await harness.newPage();
    await page.goto(link.body.data.url);
    await page.getByRole("heading", { name: "Home" }).waitFor();
    expect(page.url()).not.toContain("token");
    expectNoBrowserErrors(page);

    // Used once: a second browser with the same link gets the API's message.
    const again = await harness.newPage();
    await again.goto(link.body.data.url);
    await again.getByText(/already used, has expired/).waitFor();
    expectNoBrowserErrors(again);
  });

  it("fits a 375 px wide screen: the navigation folds behind a menu button", async () => {
    const page = await harness.newPage({ viewport: { width: 375, height: 740 } });
    await signIn(page, harness.key);
    await page.getByRole("heading", { name: "Home" }).waitFor();
    const nav = page.getByRole("navigation", { name: "Main" });
    expect(await nav.isVisible()).toBe(false);
    const menu = page.getByRole("button", { name: "Menu" });
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await menu.click();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    expect(await nav.isVisible()).toBe(true);
    // Nothing wider than the screen.
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await screenshot(page, "home-375px-menu");
    await nav.getByRole("link", { name: "Workflows" }).click();
    await page.getByRole("heading", { name: "Workflows" }).waitFor();
    expect(await nav.isVisible()).toBe(false);
    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: "Workflows" }).waitFor());
    expectNoBrowserErrors(page);
  });

  it("is keyboard operable: Tab reaches the skip link, the navigation and sign-out", async () => {
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.getByRole("heading", { name: "Home" }).waitFor();
    await page.goto("/");
    await page.getByRole("heading", { name: "Home" }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Skip to content");
    const reached = new Set<string>();
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      reached.add(String(await page.evaluate("document.activeElement.textContent")));
    }
    expect([...reached]).toEqual(expect.arrayContaining(["Sources", "Settings", "Sign out"]));
    expectNoBrowserErrors(page);
  });

  it("follows the system's dark mode, with enough contrast", async () => {
    const page = await harness.newPage({ colorScheme: "dark" });
    await signIn(page, harness.key);
    await page.getByRole("heading", { name: "Home" }).waitFor();
    const background = await page.evaluate("getComputedStyle(document.body).backgroundColor");
    expect(background).toBe("rgb(15, 18, 22)");
    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: "Home" }).waitFor());
    await screenshot(page, "home-dark");
    expectNoBrowserErrors(page);
  });

  it("never sends a signed-in visitor to another site (next=//elsewhere)", async () => {
    const page = await harness.newPage();
    await page.goto(`/sign-in?next=${encodeURIComponent("//evil.example/steal")}`);
    await page.getByLabel("API key").fill(harness.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Home" }).waitFor();
    expect(new URL(page.url()).origin).toBe(harness.url);
    expect(new URL(page.url()).pathname).toBe("/");
    expectNoBrowserErrors(page);
  });
});
