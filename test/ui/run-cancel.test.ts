import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccessibility, expectNoBrowserErrors, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { call } from "../helpers/server.js";
import { waitFor } from "../workflows/helpers.js";

/** A delayed run in the console: its Delayed badge and when it resumes; Cancel (confirmed) makes it Cancelled, saying by whom. */
describe("the console's run page for a delayed run, in a real browser", () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsole();
  }, 120_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("shows a delayed run with when it resumes, and cancels it", async () => {
    const created = await call(harness.url, "POST", "/v1/workflows", {
      key: harness.key,
      json: {
        name: "Waiter",
        steps: [
          { name: "wait", code: "export default defineComponent({ async run({ $ }) { $.flow.delay(3_600_000); return 1; } })" },
          { name: "after", code: "export default defineComponent({ async run() { return 2; } })" },
        ],
      },
    });
    expect(created.status).toBe(200);
    const queued = await call(harness.url, "POST", `/v1/workflows/${created.body.data.id}/runs`, { key: harness.key, json: {} });
    const runId: string = queued.body.data.run_id;
    await waitFor(() => call(harness.url, "GET", `/v1/runs/${runId}`, { key: harness.key }), (answer) => answer.status === 200 && answer.body.data.status === "delayed", "the delayed run");

    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto(`/runs/${runId}`);
    const waiting = page.getByRole("region", { name: "Waiting run" });
    await waiting.waitFor();
    expect(await page.locator(".facts .status-badge").textContent()).toBe("Delayed");
    expect(await waiting.textContent()).toMatch(/Delayed: the run resumes in (59|60) minutes|Delayed: the run resumes in 1 hour/);
    await checkAccessibility(page, (shown) => shown.getByRole("region", { name: "Waiting run" }).waitFor());

    await waiting.getByRole("button", { name: "Cancel run" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel run" }).click();
    await page.getByLabel("Cancelled").waitFor();
    expect(await page.locator(".facts .status-badge").textContent()).toBe("Cancelled");
    const me = (await call(harness.url, "GET", "/v1/users/me", { key: harness.key })).body.data;
    expect(await page.getByLabel("Cancelled").textContent()).toContain(`by ${me.id}`);
    expect(await page.getByRole("button", { name: "Cancel run" }).count()).toBe(0);
    expect((await call(harness.url, "GET", `/v1/runs/${runId}`, { key: harness.key })).body.data.status).toBe("cancelled");
    expectNoBrowserErrors(page);
  }, 60_000);

  it("cancels a running run from its page (not recorded yet): it is recorded cancelled and its next step never runs", async () => {
    const created = await call(harness.url, "POST", "/v1/workflows", {
      key: harness.key,
      json: {
        name: "Slow",
        steps: [
          {
            name: "slow",
            props: { store: "ui-cancel" },
            // Runs until the test lets it go (at most 40 s, under the run's timeout): a slow machine cannot let it end before the click.
            code: `export default defineComponent({ props: { store: { type: "data_store" } }, async run() { await this.store.set("started", true); const until = Date.now() + 40000; while (Date.now() < until && !(await this.store.get("release"))) await new Promise((resolve) => setTimeout(resolve, 50)); return 1; } })`,
          },
          { name: "last", props: { store: "ui-cancel" }, code: `export default defineComponent({ props: { store: { type: "data_store" } }, async run() { await this.store.set("last", true); } })` },
        ],
      },
    });
    expect(created.status).toBe(200);
    const queued = await call(harness.url, "POST", `/v1/workflows/${created.body.data.id}/runs`, { key: harness.key, json: {} });
    const runId: string = queued.body.data.run_id;
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await waitFor(() => call(harness.url, "GET", "/v1/data_stores/ui-cancel/records/started", { key: harness.key }), (answer) => answer.status === 200, "the slow step to start");
    await page.goto(`/runs/${runId}`);
    const notRecorded = page.getByRole("region", { name: "Run not recorded yet" });
    await notRecorded.waitFor();
    await notRecorded.getByRole("button", { name: "Cancel run" }).click();
    await page.getByRole("status").filter({ hasText: "Cancelling" }).waitFor();
    expect((await call(harness.url, "PUT", "/v1/data_stores/ui-cancel/records/release", { key: harness.key, json: { value: true } })).status).toBe(200);
    // Recorded when the step in progress ends; the page finds it.
    await page.locator(".facts .status-badge").filter({ hasText: "Cancelled" }).waitFor({ timeout: 15_000 });
    expect((await call(harness.url, "GET", "/v1/data_stores/ui-cancel/records/last", { key: harness.key })).status).toBe(404);
  }, 60_000);
});
