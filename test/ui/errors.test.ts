import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccessibility, expectNoBrowserErrors, screenshot, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { call } from "../helpers/server.js";
import { fire, throwingStep } from "../workflows/error-helpers.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "../workflows/helpers.js";

describe("the console's Home, Errors, Subscriptions and Settings, in a real browser", () => {
  let harness: ConsoleHarness;
  let broken: any;
  let listener: any;
  let firstErrorId: string;

  beforeAll(async () => {
    harness = await startConsole();
    // A workflow whose step throws, called twice: two errors in its $errors.
    broken = await createWorkflow(harness.server, harness.key, { name: "Broken checkout", trigger: { type: "http" }, steps: [{ name: "charge", code: throwingStep("card declined") }] });
    listener = await createWorkflow(harness.server, harness.key, { name: "Audit listener", steps: [{ name: "note", code: "export default defineComponent({ async run() { return 1; } })" }] });
    await fire(broken.trigger.endpoint_url, { n: 1 });
    await fire(broken.trigger.endpoint_url, { n: 2 });
    const listed = await waitFor(() => errorsOf(harness.server, harness.key, broken.id), (body) => body.data.length === 2, "two errors");
    firstErrorId = listed.data.find((error: any) => error.event.original_event.body.n === 1).id;
  }, 240_000);
  /** A fresh page; a missing element fails in 10 s with its locator named, well inside the test's time. */
  const opened = async (options?: Parameters<ConsoleHarness["newPage"]>[0]) => {
    const page = await harness.newPage(options);
    page.setDefaultTimeout(10_000);
    return page;
  };
  afterAll(async () => {
    await harness?.close();
  });

  it("opens a workflow's errors, shows an error's event, replays one and the selected ones, and shows the replay runs", async () => {
    const page = await opened();
    await signIn(page, harness.key);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Errors" }).click();
    await page.getByRole("heading", { name: "Errors", exact: true }).waitFor();
    // Error routing: the global error workflow, made with the first workflow, listens to every workflow's $errors.
    const routing = page.getByRole("region", { name: "Error routing" });
    await routing.getByRole("link", { name: "Global error workflow" }).waitFor();
    await routing.getByText("Errors of Every workflow (p_*) go to Global error workflow").waitFor();
    await checkAccessibility(page, (shown) => shown.getByRole("link", { name: "Broken checkout" }).waitFor());
    // Where the error notices go: the account's address (PATCH /v1/users/me).
    await routing.getByLabel("Send error notices to").fill("ops@example.com");
    await routing.getByRole("button", { name: "Save address" }).click();
    await routing.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    expect((await call(harness.url, "GET", "/v1/users/me", { key: harness.key })).body.data.email).toBe("ops@example.com");

    await page.getByRole("link", { name: "Broken checkout" }).click();
    await page.getByRole("heading", { name: "Errors of Broken checkout" }).waitFor();
    await page.getByText("card declined 1").waitFor();
    await page.getByText("card declined 2").waitFor();

    // The seed's error event, as a tree (text only).
    const firstRow = page.getByRole("row").filter({ hasText: "card declined 1" });
    await firstRow.getByRole("button", { name: "Show event" }).click();
    const detail = page.getByRole("region", { name: `Error ${firstErrorId}` });
    await detail.getByRole("tree", { name: `Error event ${firstErrorId}` }).waitFor();
    expect(await detail.textContent()).toContain("original_event");

    // Replay one: a pending state, then the new run with its replay_of.
    await firstRow.getByRole("button", { name: "Replay", exact: true }).click();
    await page.getByText("Replay started: its run appears under Replays below.").waitFor();
    const replays = page.getByRole("region", { name: "Replays" });
    await replays.getByText(`replay of ${firstErrorId}`).waitFor();
    const runs = await runsOf(harness.server, harness.key, broken.id);
    expect(runs.filter((run) => run.replay_of === firstErrorId)).toHaveLength(1);

    await checkAccessibility(page, (shown) => shown.getByText("card declined 2").waitFor());
    await screenshot(page, "errors");

    // Replay the selected ones.
    const secondRow = page.getByRole("row").filter({ hasText: "card declined 2" }).first();
    const secondId = (await errorsOf(harness.server, harness.key, broken.id)).data.find((error: any) => error.event.original_event.body.n === 2 && error.id !== firstErrorId).id;
    await secondRow.getByRole("checkbox").check();
    await page.getByRole("button", { name: "Replay selected (1)" }).click();
    await replays.getByText(`replay of ${secondId}`).waitFor();
    expect(await page.getByRole("button", { name: "Replay selected (0)" }).isDisabled()).toBe(true);

    // Replay all, after a confirmation: every listed error runs again.
    const listedBefore = (await errorsOf(harness.server, harness.key, broken.id)).page_info.total_count;
    await page.getByRole("button", { name: "Replay all" }).click();
    const dialog = page.getByRole("dialog", { name: "Replay every error?" });
    await dialog.getByRole("button", { name: "Replay all" }).click();
    await page.getByText(`${listedBefore} replays started: their runs appear under Replays below.`).waitFor();
    await waitFor(() => runsOf(harness.server, harness.key, broken.id), (all) => all.filter((run) => run.replay_of !== null).length === 2 + listedBefore, "every replay run");

    // The workflow's own switch: its errors stay listed but no longer reach the global error workflow.
    const settings = page.getByRole("region", { name: "Error settings" });
    await settings.getByLabel("Send this workflow's errors to the global error workflow").uncheck();
    await settings.getByRole("button", { name: "Save settings" }).click();
    await settings.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const saved = await call(harness.url, "GET", `/v1/workflows/${broken.id}`, { key: harness.key });
    expect(saved.body.data.settings).toEqual({ error_notifications: false, error_retention: 100 });
    expectNoBrowserErrors(page);
  }, 45_000);

  it("creates and deletes a subscription; $errors ones are listed under error routing", async () => {
    const page = await opened();
    await signIn(page, harness.key);
    await page.goto("/subscriptions");
    await page.getByRole("heading", { name: "Subscriptions", exact: true }).waitFor();
    const events = page.getByRole("table", { name: "Event subscriptions" });
    const routing = page.getByRole("table", { name: "Error routing subscriptions" });
    // The global error workflow's p_* / $errors subscription is error routing, not among the listener's triggers.
    await routing.getByText("Every workflow (p_*)").waitFor();
    await events.getByText("Broken checkout").first().waitFor();
    expect(await events.getByText("Every workflow (p_*)").count()).toBe(0);

    await page.getByLabel("Emitter").selectOption(broken.id);
    await page.getByLabel("Channel").fill("audit");
    await page.getByLabel("Listener").selectOption(listener.id);
    await page.getByRole("button", { name: "Subscribe" }).click();
    await page.getByRole("status").filter({ hasText: "Subscribed." }).waitFor();
    const row = events.getByRole("row").filter({ hasText: "audit" });
    await row.getByText("Audit listener").waitFor();
    const listed = await call(harness.url, "GET", "/v1/users/me/subscriptions", { key: harness.key });
    expect(listed.body.data).toContainEqual(expect.objectContaining({ emitter_id: broken.id, listener_id: listener.id, event_name: "audit" }));

    await checkAccessibility(page, (shown) => shown.getByRole("table", { name: "Error routing subscriptions" }).getByText("Every workflow (p_*)").waitFor());
    await screenshot(page, "subscriptions");

    await row.getByRole("button", { name: "Delete subscription of Audit listener to Broken checkout" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this subscription?" });
    await dialog.getByRole("button", { name: "Delete" }).click();
    await dialog.waitFor({ state: "hidden" }).catch(async (error) => {
      throw new Error(`${error}\nThe dialog says: ${await dialog.textContent()}`);
    });
    await events.getByRole("row").filter({ hasText: "audit" }).waitFor({ state: "detached" });
    const after = await call(harness.url, "GET", "/v1/users/me/subscriptions", { key: harness.key });
    expect(after.body.data.some((subscription: any) => subscription.event_name === "audit")).toBe(false);
    expectNoBrowserErrors(page);
  });

  it("shows the installation's processes to an admin: this one live, a process that stopped beating named lost", async () => {
    const now = Date.now();
    await harness.server.server.store.recordProcess({
      instanceId: "gone-worker-1",
      role: "worker",
      version: "0.0.0-old",
      host: "worker-host-7",
      pid: 4242,
      url: null,
      startedAt: now - 3_600_000,
      heartbeatAt: now - 600_000,
      heartbeatIntervalMs: 5_000,
      busyRunners: 0,
      queuedDeliveries: 0,
    });
    const page = await opened();
    await signIn(page, harness.key);
    await page.goto("/settings");
    const section = page.getByRole("region", { name: "Installation" });
    const processes = section.getByRole("table", { name: "Processes" });
    const self = processes.getByRole("row").filter({ hasText: "(this one)" });
    await self.waitFor();
    expect(await self.getByRole("cell").nth(0).textContent()).toBe("Live (this one)");
    expect(await self.getByRole("cell").nth(1).textContent()).toBe("all");
    const gone = processes.getByRole("row").filter({ hasText: "worker-host-7" });
    expect(await gone.getByRole("cell").nth(0).textContent()).toBe("Lost");
    expect(await gone.getByRole("cell").nth(1).textContent()).toBe("worker");
    expect(await section.getByRole("alert").textContent()).toContain("One process has stopped beating");
    await section.getByText(/^Runs waiting: \d+/).waitFor();
    await checkAccessibility(page, (shown) => shown.getByRole("table", { name: "Processes" }).waitFor());
    await harness.server.server.store.removeProcess("gone-worker-1");
    expectNoBrowserErrors(page);
  });

  it("shows a new API key once, then never again; env values are not shown after saving", async () => {
    const page = await opened();
    await signIn(page, harness.key);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { name: "Settings", exact: true }).waitFor();

    await page.getByLabel("New key's name").fill("ci-runner");
    await page.getByRole("button", { name: "Create API key" }).click();
    const shown = page.getByRole("region", { name: "New API key ci-runner" });
    const secret = (await shown.locator(".secret-value").textContent())!.trim();
    expect(secret).toMatch(/^rnl_/);
    // It is a working key.
    expect((await call(harness.url, "GET", "/v1/users/me", { key: secret })).status).toBe(200);
    await page.getByRole("table", { name: "API keys" }).getByText("ci-runner").waitFor();

    // Environment variable: the value typed is hidden, and gone from the page once saved.
    await page.getByLabel("Variable name").fill("PAYMENT_TOKEN");
    expect(await page.getByLabel(/^Value/).getAttribute("type")).toBe("password");
    await page.getByLabel(/^Value/).fill("tok-very-secret-42");
    await page.getByRole("button", { name: "Save variable" }).click();
    await page.getByText("Saved PAYMENT_TOKEN.").waitFor();
    await page.getByRole("table", { name: "Environment variables" }).getByText("PAYMENT_TOKEN").waitFor();
    expect(await page.content()).not.toContain("tok-very-secret-42");

    await checkAccessibility(page, (shown) => shown.getByRole("table", { name: "API keys" }).waitFor());
    // Leave the page and come back: the key is nowhere in the DOM.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Home" }).click();
    await page.getByRole("heading", { name: "Home" }).waitFor();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
    await page.getByRole("table", { name: "API keys" }).getByText("ci-runner").waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(await page.getByRole("region", { name: "New API key ci-runner" }).count()).toBe(0);
    // Only now, with no secret on the page, a picture of it.
    await screenshot(page, "settings");
    expect(await page.evaluate("localStorage.length + sessionStorage.length")).toBe(0);

    // Revoke it: the key stops working.
    await page.getByRole("button", { name: "Revoke key ci-runner" }).click();
    const revoke = page.getByRole("dialog", { name: "Revoke this API key?" });
    await revoke.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("table", { name: "API keys" }).getByRole("row").filter({ hasText: "ci-runner" }).getByText("Revoked").waitFor();
    expect((await call(harness.url, "GET", "/v1/users/me", { key: secret })).status).toBe(401);

    // Delete the variable, after a confirmation.
    await page.getByRole("button", { name: "Delete PAYMENT_TOKEN" }).click();
    await page.getByRole("dialog", { name: "Delete PAYMENT_TOKEN?" }).getByRole("button", { name: "Delete" }).click();
    await page.getByRole("table", { name: "Environment variables" }).waitFor({ state: "detached" });
    await page.getByText("No environment variables.").waitFor();
    expect((await call(harness.url, "GET", "/v1/env", { key: harness.key })).body.data).toEqual([]);
    expectNoBrowserErrors(page);
  });

  it("shows the last hour at a glance on Home, failing workflows first, at 375 px wide", async () => {
    const page = await opened({ viewport: { width: 375, height: 740 } });
    await signIn(page, harness.key);
    await page.getByRole("heading", { name: "Home" }).waitFor();
    const activity = await call(harness.url, "GET", "/v1/users/me/activity?minutes=60", { key: harness.key });
    if (activity.status === 404) {
      // A server without the activity route (it lands in parallel): the page says so instead of failing.
      await page.getByText("Activity is not available on this server.").waitFor();
    } else {
      expect(activity.status).toBe(200);
      await page.getByRole("heading", { name: "Failing workflows" }).waitFor();
      await page.getByRole("link", { name: "Broken checkout" }).waitFor();
      await page.getByRole("img", { name: "Runs, events and errors per minute over the last hour" }).locator("canvas").waitFor();
    }
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: "Home" }).waitFor());
    await screenshot(page, "home-375px");
    expectNoBrowserErrors(page);
  });
});
