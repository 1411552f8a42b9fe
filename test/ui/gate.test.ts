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
        steps: [{ name: "slow", code: "export default defineComponent({ async run() { await new Promise((resolve) => setTimeout(resolve, 1500)); return 1; } })" }],
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
    expect(await summary.textContent()).toMatch(/^[23] waiting, 1 running; the oldest has waited \d+ seconds? \(1 at a time\)$/);
    await checkAccessibility(page, (twin) => twin.locator(".facts .gate-summary").waitFor());
    // The page follows the line as runs end.
    await waitFor(() => runsOf(harness.server, harness.key, id), (runs) => runs.length === 4, "the four runs", 20_000);
    await page.getByText(/^0 waiting, 0 running \(1 at a time\)$/).waitFor({ timeout: 10_000 });
    expectNoBrowserErrors(page);
  }, 60_000);
});
