import { resolve } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/catalog/load-catalog.js";
import { checkAccessibility, expectNoBrowserErrors, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { call } from "../helpers/server.js";
import { eventually, eventsOf } from "../helpers/sources.js";

/** The registry test's own catalog folder (not catalog/): one source, one action. */
const FIXTURE_CATALOG = resolve(import.meta.dirname, "..", "registry", "fixtures", "catalog");

describe("the deploy page offers Runnel's catalog, in a real browser", () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsole();
    // As start-up publishes catalog/, with the fixture folder.
    await harness.server.server.engine.registry.publishCatalog(await loadCatalog(FIXTURE_CATALOG));
  }, 240_000);
  afterAll(() => harness?.close());

  async function openDeployPage(path = "/sources/new"): Promise<Page> {
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto(path);
    await page.getByRole("heading", { name: "Deploy a source" }).waitFor();
    return page;
  }

  const results = (page: Page) => page.getByRole("list", { name: "Registry components" });

  it("searches the catalog by words, app and type, picks a source, fills its props and deploys it", async () => {
    const page = await openDeployPage();
    // Sources at first: the catalog's actions are not offered for deploy.
    await results(page).getByRole("button", { name: "New pings: use fixture_demo-new-pings" }).waitFor();
    expect(await results(page).getByText("helper_functions-uuid").count()).toBe(0);
    await checkAccessibility(page, (shown) => shown.getByRole("list", { name: "Registry components" }).waitFor());

    // Actions, of one app: shown with how to use them, not deployable here.
    await page.getByLabel("Type").selectOption({ label: "Actions" });
    await page.getByLabel("App").selectOption("fixture_demo");
    await results(page).getByText("Add numbers").waitFor();
    expect(await results(page).getByText("An action runs as a workflow step: add it to a workflow with key fixture_demo-add-numbers.").count()).toBe(1);
    expect(await results(page).getByRole("button").count()).toBe(0);

    // Words: nothing matches, then the source.
    await page.getByLabel("Type").selectOption({ label: "Sources" });
    const search = page.getByRole("searchbox", { name: "Search the registry" });
    await search.fill("no such component");
    await search.press("Enter");
    await page.getByText("Nothing in the registry matches").waitFor();
    // Enter searched; it did not submit the form.
    expect(page.url()).toMatch(/\/sources\/new$/);
    await search.fill("ping");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await results(page).getByRole("button", { name: "New pings: use fixture_demo-new-pings" }).click();

    // Step 2: the catalog component's props form, its default filled in.
    await page.getByRole("heading", { name: "2. Configure and deploy" }).waitFor();
    await page.locator(".component-summary").getByText("New pings", { exact: true }).waitFor();
    expect(await page.getByLabel("Component key").inputValue()).toBe("fixture_demo-new-pings");
    const greeting = page.getByLabel("Greeting");
    expect(await greeting.inputValue()).toBe("hello");
    await greeting.fill("from the console");
    await page.getByLabel("Source name").fill("console pings");
    await page.getByRole("button", { name: "Deploy", exact: true }).click();

    await page.waitForURL(/\/sources\/dc_[^/?]+$/);
    const id = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    const source = (await call(harness.url, "GET", `/v1/sources/${id}`, { key: harness.key })).body.data;
    expect(source).toMatchObject({ name: "console pings", configured_props: { greeting: "from the console" } });
    await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":7}' });
    const [event] = await eventually(async () => {
      const events = await eventsOf(harness.server, harness.key, id);
      return events.length > 0 ? events : undefined;
    });
    expect(event.event).toEqual({ greeting: "from the console", ping: { n: 7 } });
    expectNoBrowserErrors(page);
  }, 90_000);

  it("lists a published app under Type: Apps, with how components use it, and nothing to deploy", async () => {
    const app = `export default { type: "app", app: "console_crm", version: "1.0.0", description: "A CRM for the console test", methods: { greet(name) { return "hi " + name; } } };`;
    const published = await call(harness.url, "POST", "/v1/components/registry", { key: harness.key, json: { component_code: app, filename: "console_crm.app.mjs" } });
    expect(published.status).toBe(201);
    const page = await openDeployPage();
    await page.getByLabel("Type").selectOption({ label: "Apps" });
    await results(page).getByText("A CRM for the console test").waitFor();
    expect(await results(page).getByText('An app is not deployed: a component uses it through an app prop, { type: "app", app: "console_crm" }, then calls this.<prop>.greet().').count()).toBe(1);
    expect(await results(page).getByRole("button").count()).toBe(0);
    // The app filter offers the app's own slug.
    await page.getByLabel("App").selectOption("console_crm");
    await results(page).getByText("A CRM for the console test").waitFor();

    // Settings lists what you published (the app, by kind and version), not Runnel's catalog.
    await page.goto("/settings");
    const publishedTable = page.getByRole("table", { name: "Published components" });
    const row = publishedTable.getByRole("row").filter({ hasText: "console_crm" });
    await row.waitFor();
    expect(await row.getByRole("cell").nth(1).textContent()).toBe("app");
    await row.getByRole("button", { name: "console_crm 1.0.0" }).click();
    await page.getByText('Components use it through an app prop: { type: "app", app: "console_crm" }.').waitFor();
    const catalogKeys = (await loadCatalog(FIXTURE_CATALOG)).components.map((entry) => entry.key);
    for (const key of catalogKeys) expect(await publishedTable.getByText(key, { exact: true }).count(), key).toBe(0);
    expectNoBrowserErrors(page);
  }, 60_000);

  it("opens a catalog component from the hosted service's deploy URL (?action=create&key=) with its props form", async () => {
    const page = await openDeployPage("/sources?action=create&key=fixture_demo-new-pings");
    await page.waitForURL(/\/sources\/new\?key=fixture_demo-new-pings$/);
    await page.getByRole("heading", { name: "2. Configure and deploy" }).waitFor();
    await page.locator(".component-summary").getByText("Emits every ping sent to its endpoint, with a greeting.").waitFor();
    expect(await page.getByLabel("Greeting").inputValue()).toBe("hello");
    expectNoBrowserErrors(page);
  }, 60_000);
});
