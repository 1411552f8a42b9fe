import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccessibility, expectNoBrowserErrors, screenshot, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { deploySource, eventsOf, eventually } from "../helpers/sources.js";
import { call, createUser } from "../helpers/server.js";

const ECHO = `module.exports = {
  name: "Echo", version: "0.1.0",
  props: { http: { type: "$.interface.http" }, label: { type: "string" }, token: { type: "string", secret: true, optional: true } },
  async run(event) {
    console.log("echo got", event?.method ?? "a manual run");
    this.$emit({ body: event?.body ?? null, label: this.label }, { summary: "echo " + (event?.body?.note ?? "manual") });
  },
};`;

/** A timer source with a secret: its events tell the secret's length (never the secret itself, which its code must not hold either: the page shows the code). */
const TIMED_ECHO = `module.exports = {
  name: "Timed echo", version: "0.1.0",
  props: { timer: { type: "$.interface.timer", default: { intervalSeconds: 3600 } }, label: { type: "string" }, token: { type: "string", secret: true, optional: true } },
  async run() {
    this.$emit({ label: this.label, token_length: this.token?.length ?? 0 }, { summary: "timed echo" });
  },
};`;

describe("the console's Sources pages, in a real browser", { timeout: 120_000 }, () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsole();
  }, 240_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("lists sources with their endpoint and shows a POSTed event live, as text, with its JSON", async () => {
    const source = await deploySource(harness.server, harness.key, { component_code: ECHO, name: "live-echo", configured_props: { label: "first", token: "sekret-value-123" } });
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sources" }).click();
    await page.getByRole("heading", { name: "Sources" }).waitFor();
    const row = page.getByRole("row", { name: /live-echo/ });
    await row.waitFor();
    expect(await row.textContent()).toContain(source.endpoint_url);
    expect(await row.getByRole("button", { name: "Copy URL" }).isVisible()).toBe(true);
    expect(await page.getByRole("link", { name: "Deploy a source" }).getAttribute("href")).toBe("/sources/new");
    await checkAccessibility(page, (shown) => shown.getByRole("row", { name: /live-echo/ }).waitFor());
    await screenshot(page, "sources");

    await page.getByRole("link", { name: "live-echo" }).click();
    await page.getByRole("heading", { name: "live-echo" }).waitFor();
    await page.getByText("Live: new events appear here").waitFor();
    // The component's own name and version.
    await page.getByText("Echo 0.1.0").waitFor();
    // A stranger's body: markup in it must stay text.
    const posted = await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ note: "hello <img src=x onerror=alert(1)>" }) });
    expect(posted.status).toBe(200);
    const event = page.getByRole("button", { name: /echo hello <img src=x onerror=alert\(1\)>/ });
    await event.waitFor();
    expect(await page.locator(".event-list img").count()).toBe(0);
    await event.click();
    const tree = page.getByRole("tree", { name: /^Event / });
    await tree.waitFor();
    expect(await tree.textContent()).toContain('"hello <img src=x onerror=alert(1)>"');
    expect(await page.getByRole("button", { name: "Copy JSON" }).isVisible()).toBe(true);
    // The secret prop's value is nowhere in the page.
    expect(await page.content()).not.toContain("sekret-value-123");
    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: "live-echo" }).waitFor());
    await screenshot(page, "source-events");
    expectNoBrowserErrors(page);
  });

  it("runs a source now, shows its logs live, and deactivates and activates it", async () => {
    const source = await deploySource(harness.server, harness.key, { component_code: ECHO, name: "run-echo", configured_props: { label: "x" } });
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto(`/sources/${source.id}`);
    await page.getByRole("heading", { name: "run-echo" }).waitFor();
    await page.getByRole("button", { name: "Run now" }).click();
    await page.getByText(/Ran in \d+ ms and emitted 1 event\./).waitFor();
    await page.getByRole("button", { name: /echo manual/ }).waitFor();

    await page.getByRole("tab", { name: "Logs" }).click();
    await page.getByText("echo got a manual run").waitFor();
    await fetch(source.endpoint_url, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    await page.getByText("echo got POST").waitFor();
    await screenshot(page, "source-logs");

    await page.getByRole("button", { name: "Deactivate" }).click();
    // Exact: "Activate" is also a part of "Deactivate", which a loose match takes at once, before the change is made.
    await page.getByRole("button", { name: "Activate", exact: true }).waitFor();
    expect((await call(harness.url, "GET", `/v1/sources/${source.id}`, { key: harness.key })).body.data.active).toBe(false);
    await page.getByRole("button", { name: "Activate", exact: true }).click();
    await page.getByRole("button", { name: "Deactivate" }).waitFor();
    expect((await call(harness.url, "GET", `/v1/sources/${source.id}`, { key: harness.key })).body.data.active).toBe(true);
    expectNoBrowserErrors(page);
  });

  it("changes props through the form (the API's error at the field; a secret left empty kept) and code (CodeMirror under the CSP)", async () => {
    const source = await deploySource(harness.server, harness.key, { component_code: TIMED_ECHO, name: "config-echo", configured_props: { label: "before", token: "keep-this-secret" } });
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto(`/sources/${source.id}`);
    await page.getByRole("tab", { name: "Configuration" }).click();
    const label = page.getByRole("textbox", { name: "label", exact: true });
    const token = page.getByLabel("token", { exact: true });
    await label.waitFor();
    // Pre-filled with the current values; the secret one is not, and its field is a password field.
    expect(await label.inputValue()).toBe("before");
    expect(await token.inputValue()).toBe("");
    expect(await token.getAttribute("type")).toBe("password");
    expect(await page.content()).not.toContain("keep-this-secret");

    // The form's own checks pass a cron of two fields; the API refuses it, and its message shows at the timer's field.
    await page.getByLabel("timer", { exact: true }).selectOption("cron");
    await page.getByLabel("timer: cron expression").fill("every hour");
    await page.getByRole("button", { name: "Save props" }).click();
    const timerField = page.locator(".field", { has: page.getByLabel("timer", { exact: true }) });
    await timerField.locator(".field-error").waitFor();
    expect(await timerField.locator(".field-error").textContent()).toMatch(/cron must have 5 or 6/);

    await page.getByLabel("timer", { exact: true }).selectOption("interval");
    await label.fill("after");
    await page.getByRole("button", { name: "Save props" }).click();
    await page.getByText("Saved: the source was restarted with these props.").waitFor();
    const saved = await call(harness.url, "GET", `/v1/sources/${source.id}`, { key: harness.key });
    expect(saved.body.data.configured_props.label).toBe("after");
    expect(await label.inputValue()).toBe("after");
    // The secret left empty kept its value: the source still runs with it.
    const kept = await call(harness.url, "POST", `/v1/sources/${source.id}/run`, { key: harness.key, json: {} });
    expect(kept.body.data.ok).toBe(true);
    expect((await eventsOf(harness.server, harness.key, source.id))[0].event).toMatchObject({ label: "after", token_length: "keep-this-secret".length });

    // A new secret typed in is saved, and gone from the page once saved.
    await token.fill("new-secret-typed-here");
    await page.getByRole("button", { name: "Save props" }).click();
    await page.getByText("Saved: the source was restarted with these props.").waitFor();
    await eventually(async () => ((await token.inputValue()) === "" ? true : undefined), 5_000, "the secret field to be emptied");
    expect(await page.content()).not.toContain("new-secret-typed-here");
    const replaced = await call(harness.url, "POST", `/v1/sources/${source.id}/run`, { key: harness.key, json: {} });
    expect(replaced.body.data.ok).toBe(true);
    expect((await eventsOf(harness.server, harness.key, source.id))[0].event).toMatchObject({ label: "after", token_length: "new-secret-typed-here".length });

    const editor = page.getByRole("textbox", { name: "The source's code" });
    await editor.waitFor();
    expect(await editor.textContent()).toContain('name: "Timed echo"');
    // The editor follows the system's light/dark as it changes, with colours of its own in dark mode.
    const editorBackground = () => page.locator(".cm-editor").first().evaluate((element: any) => (globalThis as any).getComputedStyle(element).backgroundColor as string);
    await page.emulateMedia({ colorScheme: "dark" });
    await expect.poll(editorBackground).toBe("rgb(23, 27, 33)");
    await page.emulateMedia({ colorScheme: "light" });
    await expect.poll(editorBackground).not.toBe("rgb(23, 27, 33)");
    await editor.click();
    await page.keyboard.press("ControlOrMeta+End");
    await page.keyboard.type("\n// edited in the console\n");
    await page.getByRole("button", { name: "Save code" }).click();
    await page.getByText("Saved: the source runs the new code.").waitFor();
    const after = await call(harness.url, "GET", `/v1/sources/${source.id}`, { key: harness.key });
    const component = await call(harness.url, "GET", `/v1/components/${after.body.data.component_id}`, { key: harness.key });
    expect(component.body.data.code).toContain("// edited in the console");
    // The new code keeps the props, the secret among them.
    const run = await call(harness.url, "POST", `/v1/sources/${source.id}/run`, { key: harness.key, json: {} });
    expect(run.body.data.ok).toBe(true);
    expect((await eventsOf(harness.server, harness.key, source.id))[0].event).toMatchObject({ label: "after", token_length: "new-secret-typed-here".length });
    await screenshot(page, "source-configuration");
    expectNoBrowserErrors(page);
  });

  it("deletes a source after confirmation, and Cancel deletes nothing", async () => {
    const source = await deploySource(harness.server, harness.key, { component_code: ECHO, name: "doomed-echo", configured_props: { label: "x" } });
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto(`/sources/${source.id}`);
    await page.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete doomed-echo?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await call(harness.url, "GET", `/v1/sources/${source.id}`, { key: harness.key })).status).toBe(200);

    // The open dialog, and the configuration tab, pass the accessibility check too.
    await page.getByRole("button", { name: "Delete" }).click();
    await checkAccessibility(page, () => dialog.waitFor());
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.getByRole("tab", { name: "Configuration" }).click();
    await checkAccessibility(page, (shown) => shown.getByRole("textbox", { name: "The source's code" }).waitFor());
    await page.getByRole("button", { name: "Delete" }).click();
    await screenshot(page, "source-delete-dialog");
    await dialog.getByRole("button", { name: "Delete source" }).click();
    await page.getByRole("heading", { name: "Sources" }).waitFor();
    expect((await call(harness.url, "GET", `/v1/sources/${source.id}`, { key: harness.key })).status).toBe(404);
    expectNoBrowserErrors(page);
  });

  it("fits a 375 px wide screen: the list, the inspector and the configuration", async () => {
    const source = await deploySource(harness.server, harness.key, { component_code: ECHO, name: "narrow-echo-with-a-rather-long-name", configured_props: { label: "x" } });
    await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ note: "n".repeat(300) }) });
    const page = await harness.newPage({ viewport: { width: 375, height: 740 } });
    await signIn(page, harness.key);
    await page.goto("/sources");
    await page.getByRole("link", { name: "narrow-echo-with-a-rather-long-name" }).waitFor();
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await screenshot(page, "sources-375px");
    await page.getByRole("link", { name: "narrow-echo-with-a-rather-long-name" }).click();
    await page.getByRole("button", { name: /echo n+/ }).click();
    await page.getByRole("tree", { name: /^Event / }).waitFor();
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await page.getByRole("tab", { name: "Configuration" }).click();
    await page.getByRole("textbox", { name: "The source's code" }).waitFor();
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: "narrow-echo-with-a-rather-long-name" }).waitFor());
    expectNoBrowserErrors(page);
  });

  it("keeps up with a burst: 60 events POSTed at once all appear live, newest first, capped at 100", async () => {
    const source = await deploySource(harness.server, harness.key, { component_code: ECHO, name: "burst-echo", configured_props: { label: "x" } });
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto(`/sources/${source.id}`);
    await page.getByText("Live: new events appear here").waitFor();
    const post = (note: string) => fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ note }) });
    await Promise.all(Array.from({ length: 60 }, (_, i) => post(`burst ${i}`)));
    const rows = page.locator(".event-list li");
    // (Locators, not waitForFunction: the console's CSP forbids the eval that polling a string needs.)
    for (let i = 0; i < 60; i++) await page.getByRole("button", { name: new RegExp(`echo burst ${i}$`) }).waitFor();
    expect(await rows.count()).toBe(60);
    // Then one more, sent alone: it is at the top.
    await post("the last one");
    await rows.first().getByText("echo the last one").waitFor();
    // 60 more: the inspector shows the most recent 100.
    await Promise.all(Array.from({ length: 60 }, (_, i) => post(`second burst ${i}`)));
    for (let i = 0; i < 60; i++) await page.getByText(`echo second burst ${i}`, { exact: true }).waitFor();
    expect(await rows.count()).toBe(100);
    expectNoBrowserErrors(page);
  });

  it("pages the list, 20 at a time, newest first, with Next and Previous", async () => {
    const user = await createUser(harness.server, "many-sources");
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) ids.push((await deploySource(harness.server, user.key, { component_code: ECHO, name: `paged-${String(i).padStart(2, "0")}`, configured_props: { label: "x" } })).id);
    const page = await harness.newPage();
    await signIn(page, user.key);
    await page.goto("/sources");
    await page.getByText("1–20 of 21").waitFor();
    expect(await page.getByRole("link", { name: "paged-20" }).isVisible()).toBe(true);
    expect(await page.getByRole("link", { name: "paged-00" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Previous" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByText("21–21 of 21").waitFor();
    expect(await page.getByRole("link", { name: "paged-00" }).isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Next" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Previous" }).click();
    await page.getByText("1–20 of 21").waitFor();
    expect(await page.getByRole("link", { name: "paged-01" }).isVisible()).toBe(true);
    expectNoBrowserErrors(page);
  });
});
