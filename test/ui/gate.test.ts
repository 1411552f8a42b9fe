import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccessibility, expectNoBrowserErrors, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { call } from "../helpers/server.js";
import { runsOf, waitFor } from "../workflows/helpers.js";

/** The console's workflow page shows what waits at a gated workflow's gate (settings.concurrency), and follows it as runs end. */
describe("the console: a workflow's waiting line", () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsole();
  }, 240_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("shows the events waiting for their turn, then none once they ran", async () => {
    const created = await call(harness.url, "POST", "/v1/workflows", {
      key: harness.key,
      json: {
        name: "One at a time",
        trigger: { type: "http" },
        settings: { concurrency: 1 },
        steps: [{ name: "slow", code: "export default defineComponent({ async run() { await new Promise((resolve) => setTimeout(resolve, 3000)); return 1; } })" }],
      },
    });
    expect(created.status).toBe(200);
    const id: string = created.body.data.id;
    for (let n = 0; n < 4; n += 1) {
      const answer = await fetch(created.body.data.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      expect(answer.status).toBe(200);
    }
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto(`/workflows/${id}`);
    const summary = page.locator(".facts .gate-summary");
    await summary.waitFor();
    // 3 waiting at first; under load the page came after one or two more runs ended (each takes 3 s).
    expect(await summary.textContent()).toMatch(/^[123] waiting, 1 running; the oldest has waited \d+ seconds? \(1 at a time\)$/);
    await checkAccessibility(page, (shown) => shown.locator(".facts .gate-summary").waitFor());
    // The page follows the line as runs end.
    await waitFor(() => runsOf(harness.server, harness.key, id), (runs) => runs.length === 4, "the four runs", 30_000);
    await page.getByText(/^0 waiting, 0 running \(1 at a time\)$/).waitFor({ timeout: 10_000 });
    expectNoBrowserErrors(page);
  }, 60_000);

  it("lists the waiting events (the first 20, and how many more) and cancels one after confirming: it never runs", async () => {
    const created = await call(harness.url, "POST", "/v1/workflows", {
      key: harness.key,
      json: {
        name: "Long line",
        trigger: { type: "http" },
        settings: { concurrency: 1 },
        // The first run holds the slot while the page is looked at; the others are quick.
        steps: [{ name: "slow", code: "export default defineComponent({ async run({ steps }) { await new Promise((resolve) => setTimeout(resolve, steps.trigger.event.body.n === 0 ? 15000 : 20)); return 1; } })" }],
      },
    });
    expect(created.status).toBe(200);
    const id: string = created.body.data.id;
    for (let n = 0; n < 24; n += 1) {
      const answer = await fetch(created.body.data.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      expect(answer.status).toBe(200);
    }
    const events = (await call(harness.url, "GET", `/v1/sources/${created.body.data.trigger.source_id}/event_summaries?expand=event&limit=100`, { key: harness.key })).body.data as any[];
    const eventOf = (n: number): string => events.find((event) => event.event.body.n === n).id;
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto(`/workflows/${id}`);
    const list = page.getByRole("list", { name: "Waiting events" });
    await list.waitFor();
    const items = list.getByRole("listitem");
    expect(await items.count()).toBe(20);
    // In line order: the first waiting (n 1) is next.
    expect(await items.first().textContent()).toContain(`#1 ${eventOf(1)}`);
    expect(await items.nth(1).textContent()).toContain(`#2 ${eventOf(2)}`);
    await page.getByText("and 3 more", { exact: true }).waitFor();
    await checkAccessibility(page, (shown) => shown.getByRole("list", { name: "Waiting events" }).waitFor());

    // Cancel asks first.
    await page.getByRole("button", { name: `Cancel waiting event ${eventOf(2)}` }).click();
    const dialog = page.getByRole("dialog", { name: "Cancel this waiting event?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel event" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.getByText(eventOf(2)).waitFor({ state: "detached" });
    expect(await items.nth(1).textContent()).toContain(`#2 ${eventOf(3)}`);
    await page.getByText("and 2 more", { exact: true }).waitFor();

    const runs = await waitFor(() => runsOf(harness.server, harness.key, id), (runs) => runs.length === 24, "the 24 runs", 30_000);
    const statuses = new Map(runs.map((run: any) => [run.trigger.event_id, run.status]));
    expect(statuses.get(eventOf(2))).toBe("cancelled");
    expect([...statuses.values()].filter((status) => status === "success").length).toBe(23);
    await list.waitFor({ state: "detached", timeout: 10_000 });
    expectNoBrowserErrors(page);
  }, 90_000);
});
