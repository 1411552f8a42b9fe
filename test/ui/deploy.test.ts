import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccessibility, expectNoBrowserErrors, screenshot, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { call } from "../helpers/server.js";

/** A source with a secret, static options, a bounded integer and a list; it answers with what it was configured with. */
const SECRET_SOURCE = `
export default {
  name: "Secret echo",
  version: "0.1.0",
  type: "source",
  description: "Answers with what it was **configured** with.",
  props: {
    http: { type: "$.interface.http", customResponse: true },
    token: { type: "string", secret: true, label: "API token", description: "Sent to *the service*. <img src=x><script>document.title = 'owned'</script>" },
    region: { type: "string", label: "Region", options: ["eu", { label: "United States", value: "us" }] },
    limit: { type: "integer", label: "Limit", min: 1, max: 10, optional: true, default: 5 },
    tags: { type: "string[]", label: "Tags", optional: true },
  },
  async run(event) {
    this.http.respond({ status: 200, body: { token_length: this.token.length, token_ends: this.token.slice(-3), region: this.region, limit: this.limit, tags: this.tags ?? null } });
    this.$emit({ got: event.body });
  },
};
`;

/** A source whose channel options come from a paged, searchable options method that reads the region chosen before it. */
const CHANNELS_SOURCE = `
const PAGES = [["general", "random"], ["alerts", "builds"]];
export default {
  name: "Channel picker",
  version: "0.1.0",
  type: "source",
  props: {
    http: { type: "$.interface.http", customResponse: true },
    region: { type: "string", label: "Region", options: ["eu", { label: "United States", value: "us" }] },
    channel: {
      type: "string",
      label: "Channel",
      async options({ page, query, region }) {
        // A search looks through every page's names and answers them at once.
        const names = query ? (page === 0 ? PAGES.flat().filter((name) => name.includes(query)) : []) : (PAGES[page] ?? []);
        return names.map((name) => ({ label: "#" + region + "-" + name, value: name }));
      },
    },
  },
  async run() {
    this.http.respond({ status: 200, body: { region: this.region, channel: this.channel } });
  },
};
`;

/** A timer source, published to the registry: the deploy URL with key= opens it. */
const TIMER_SOURCE = `
export default {
  key: "ui-deploy-timer",
  name: "Ticker",
  version: "1.0.0",
  type: "source",
  props: { schedule: { type: "$.interface.timer", label: "Schedule", default: { intervalSeconds: 3600 } } },
  async run() { this.$emit({ tick: true }); },
};
`;

const URL_SOURCE = `
module.exports = { name: "Fetched from a URL", version: "0.2.0", type: "source", props: { greeting: { type: "string", label: "Greeting" } }, async run() {} };
`;

describe("deploying a source in the console, in a real browser", () => {
  let harness: ConsoleHarness;
  let codeServer: Server;
  let codeUrl: string;
  /** Whether the API has POST /v1/components/props/options (added beside this page by the console-api work). */
  let hasDraftOptions = false;

  beforeAll(async () => {
    // The server fetches component URLs; this one is on loopback, which only an allow-list lets it reach.
    harness = await startConsole({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
    codeServer = createServer((_request, response) => response.writeHead(200, { "content-type": "text/javascript" }).end(URL_SOURCE));
    await new Promise<void>((resolve) => codeServer.listen(0, "127.0.0.1", resolve));
    codeUrl = `http://127.0.0.1:${(codeServer.address() as AddressInfo).port}/greeter.js`;
    const published = await call(harness.url, "POST", "/v1/components/registry", { key: harness.key, json: { component_code: TIMER_SOURCE, filename: "timer.mjs" } });
    expect(published.status).toBe(201);
    const probe = await call(harness.url, "POST", "/v1/components/props/options", { key: harness.key, json: {} });
    hasDraftOptions = probe.status !== 404;
  }, 240_000);
  afterAll(async () => {
    codeServer?.close();
    await harness?.close();
  });

  async function openDeployPage(): Promise<Page> {
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto("/sources/new");
    await page.getByRole("heading", { name: "Deploy a source" }).waitFor();
    return page;
  }

  async function deployedSourceId(page: Page): Promise<string> {
    await page.waitForURL(/\/sources\/dc_[^/?]+$/);
    return decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
  }

  async function postToEndpoint(sourceId: string, body: unknown): Promise<{ status: number; body: any }> {
    const source = await call(harness.url, "GET", `/v1/sources/${sourceId}`, { key: harness.key });
    expect(source.status).toBe(200);
    const response = await fetch(source.body.data.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  }

  it("deploys pasted code: the secret typed hidden and never in the page after deploy, min/max checked first, the endpoint answers", async () => {
    const page = await openDeployPage();
    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: "Deploy a source" }).waitFor());

    await page.getByRole("radio", { name: "Paste code" }).check();
    await page.getByRole("textbox", { name: "Component code" }).click();
    await page.keyboard.insertText(SECRET_SOURCE);
    await page.getByRole("button", { name: "Load the component" }).click();
    await page.getByRole("heading", { name: "2. Configure and deploy" }).waitFor();
    await page.getByText("Secret echo", { exact: true }).waitFor();

    // The description is the author's Markdown, sanitized: emphasis kept, the image and the script gone.
    // (Not an inline handler here: Chromium reports one as a CSP violation as soon as DOMPurify parses it, blocked but noisy.)
    expect(await page.locator(".field-description em", { hasText: "the service" }).count()).toBe(1);
    expect(await page.locator(".field-description img, .field-description script").count()).toBe(0);
    expect(await page.title()).not.toBe("owned");
    // The HTTP interface is provided, not asked.
    await page.getByText("an HTTP endpoint, made when the source is deployed.").waitFor();

    const secret = "tok-7Hq2-very-secret-XYZ";
    const token = page.getByLabel("API token");
    expect(await token.getAttribute("type")).toBe("password");
    await token.fill(secret);
    await page.getByLabel("Region").selectOption({ label: "United States" });
    await page.getByLabel("Limit").fill("50");
    await page.getByRole("textbox", { name: "Tags", exact: true }).fill("alpha");
    await page.getByRole("button", { name: "Add an item to Tags" }).click();
    await page.getByLabel("Tags, item 2").fill("beta");
    await page.getByLabel("Source name").fill("secret echo");
    await screenshot(page, "deploy");

    // Checked before sending: nothing is deployed with a limit over its max.
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    await page.getByText("Enter 10 or less.").waitFor();
    expect(page.url()).toMatch(/\/sources\/new$/);
    await page.getByLabel("Limit").fill("3");
    await page.getByRole("button", { name: "Deploy", exact: true }).click();

    const id = await deployedSourceId(page);
    expect(await page.content()).not.toContain(secret);
    // Nor in the browser's storage (the router keeps scroll positions there; nothing typed).
    expect(await page.evaluate("JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })")).not.toContain(secret);

    const answered = await postToEndpoint(id, { hello: "world" });
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual({ token_length: secret.length, token_ends: "XYZ", region: "us", limit: 3, tags: ["alpha", "beta"] });
    const source = await call(harness.url, "GET", `/v1/sources/${id}`, { key: harness.key });
    expect(source.body.data.name).toBe("secret echo");
    expect(JSON.stringify(source.body.data)).not.toContain(secret);
    expectNoBrowserErrors(page);
  }, 60_000);

  it("loads a prop's async options page by page, searched, with the earlier props' values, from an uploaded file", async (context) => {
    if (!hasDraftOptions) context.skip("POST /v1/components/props/options is not in this API yet (the console-api work adds it)");
    const page = await openDeployPage();
    await page.getByRole("radio", { name: "Upload a file" }).check();
    await page.getByLabel("Component file").setInputFiles({ name: "channels.mjs", mimeType: "text/javascript", buffer: Buffer.from(CHANNELS_SOURCE) });
    await page.getByText("channels.mjs:").waitFor();
    await page.getByRole("button", { name: "Load the component" }).click();
    await page.getByText("Channel picker", { exact: true }).waitFor();

    // The region chosen above reaches the options method.
    await page.getByLabel("Region").selectOption({ label: "United States" });
    const channel = page.getByRole("combobox", { name: "Channel", exact: true });
    await channel.locator("option", { hasText: "#us-general" }).waitFor({ state: "attached" });
    expect(await channel.locator("option", { hasText: "#us-alerts" }).count()).toBe(0);
    await page.getByRole("button", { name: "More options" }).click();
    await channel.locator("option", { hasText: "#us-alerts" }).waitFor({ state: "attached" });
    // The third page is empty: there is nothing more to ask for.
    await page.getByRole("button", { name: "More options" }).click();
    await page.getByRole("button", { name: "More options" }).waitFor({ state: "detached" });
    await page.getByText("4 options loaded").waitFor();

    await page.getByLabel("Search Channel").fill("buil");
    await page.getByLabel("Search Channel").press("Enter");
    await page.getByText("1 option loaded").waitFor();
    // Enter searched; it did not submit the form.
    expect(page.url()).toMatch(/\/sources\/new$/);
    await page.getByRole("button", { name: "More options" }).click();
    await page.getByRole("button", { name: "More options" }).waitFor({ state: "detached" });
    expect(await channel.locator("option").allTextContents()).toEqual(["Choose…", "#us-builds"]);
    await channel.selectOption({ label: "#us-builds" });

    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    const id = await deployedSourceId(page);
    const answered = await postToEndpoint(id, {});
    expect(answered.body).toEqual({ region: "us", channel: "builds" });
    expectNoBrowserErrors(page);
  }, 60_000);

  it("opens the deploy URL with key= pre-filled, and shows the API's validation error at the field it names", async () => {
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto("/sources?action=create&key=ui-deploy-timer");
    await page.waitForURL(/\/sources\/new\?key=ui-deploy-timer$/);
    expect(await page.getByLabel("Component key").inputValue()).toBe("ui-deploy-timer");
    // In the loaded component's summary (the registry's list beside it names it too).
    await page.locator(".component-summary").getByText("Ticker", { exact: true }).waitFor();
    // The default schedule is filled in.
    expect(await page.getByLabel("Schedule: interval in seconds").inputValue()).toBe("3600");

    await page.getByLabel("Schedule", { exact: true }).selectOption("cron");
    await page.getByLabel("Schedule: cron expression").fill("every tuesday");
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    // The API names configured_props.schedule: its message shows there, tied to the input.
    const field = page.locator(".field.has-error");
    await field.waitFor();
    expect(await field.locator("label").textContent()).toContain("Schedule");
    expect(await field.locator(".field-error").textContent()).toContain('Timer "schedule"');
    expect(await page.getByLabel("Schedule", { exact: true }).getAttribute("aria-describedby")).toContain(await field.locator(".field-error").getAttribute("id"));

    await page.getByLabel("Schedule: cron expression").fill("*/5 * * * *");
    // A zone the server does not know is named at the field; a known one is kept with the schedule.
    await page.getByLabel("Schedule: time zone").fill("Mars/Olympus");
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    await page.locator(".field.has-error .field-error", { hasText: "Mars/Olympus" }).waitFor();
    await page.getByLabel("Schedule: time zone").fill("Europe/Paris");
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    const id = await deployedSourceId(page);
    const source = await call(harness.url, "GET", `/v1/sources/${id}`, { key: harness.key });
    expect(source.body.data.configured_props.schedule).toEqual({ cron: "*/5 * * * *", interval_seconds: null, timezone: "Europe/Paris" });
    expectNoBrowserErrors(page);
  }, 60_000);

  it("opens the deploy URL with url= pre-filled; loading it fetches the code from that address (on a 375 px phone)", async () => {
    const page = await harness.newPage({ viewport: { width: 375, height: 740 } });
    await signIn(page, harness.key);
    await page.goto(`/sources?action=create&url=${encodeURIComponent(codeUrl)}`);
    await page.waitForURL(/\/sources\/new\?url=/);
    expect(await page.getByRole("radio", { name: "URL" }).isChecked()).toBe(true);
    expect(await page.getByLabel("Component URL").inputValue()).toBe(codeUrl);
    await page.getByRole("button", { name: "Load the component" }).click();
    await page.getByText("Fetched from a URL", { exact: true }).waitFor();
    expect(await page.getByLabel("Greeting").isVisible()).toBe(true);
    // Nothing wider than the phone: no sideways scrolling.
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    expectNoBrowserErrors(page);
  }, 60_000);
});
